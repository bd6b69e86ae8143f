"""Notifications (toasts) that never cover the prompt, the status bar, the key footer or a dialog.

Textual docks a screen's toasts at its bottom edge. ``keep_toasts_above(screen, anchor)`` moves them up
to just above ``anchor`` (the prompt) after every layout, so they follow it as it grows by a line.
``keep_toasts_off_dialogs(app)`` does the same for every modal screen the app shows: its toasts stand
below its dialog box where they fit, else above it.
"""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.css.query import NoMatches
from textual.screen import ModalScreen, Screen
from textual.widget import Widget

TOAST_RACK = "#textual-toastrack"
"""The id Textual gives each screen's container of toasts."""


def keep_toasts_above(screen: Screen[Any], anchor: Widget) -> None:
    """After each layout of ``screen``, end its toasts one row above ``anchor``'s top edge."""

    def place(_: Screen[Any]) -> None:
        if not anchor.is_attached or not anchor.display or anchor.region.height == 0:
            return
        try:
            rack = screen.query_one(TOAST_RACK)
        except NoMatches:
            return
        below = max(screen.size.height - anchor.region.y, 0)
        if rack.styles.margin.bottom != below:  # unchanged: no new layout (this runs after each one)
            rack.styles.margin = (0, 0, below, 0)

    screen.screen_layout_refresh_signal.subscribe(screen, place)


def toast_margin(screen_height: int, box_top: int, box_bottom: int, toasts: int) -> int:
    """The bottom margin of a dialog screen's toasts (``toasts`` rows high): none when they fit below the
    box, else up to just above it (where the screen has no room either way: below, as Textual has it)."""
    if screen_height - box_bottom >= toasts or box_top < toasts:
        return 0
    return screen_height - box_top


def keep_toasts_off_dialogs(app: App[Any]) -> None:
    """Keep the toasts of every modal screen ``app`` shows off its dialog box (its first child)."""
    placed: set[int] = set()

    def watch(screen: Screen[Any]) -> None:
        # A dialog pushed while the app shuts down (a turn asking for approval as Ctrl+Q ends it) is
        # never mounted: Textual refuses a subscription of a node that is not running.
        if not screen.is_running:
            return
        if isinstance(screen, ModalScreen) and id(screen) not in placed:
            placed.add(id(screen))
            screen.screen_layout_refresh_signal.subscribe(screen, _off_the_box)

    app.screen_change_signal.subscribe(app, watch)


def _off_the_box(screen: Screen[Any]) -> None:
    boxes = [child for child in screen.children if child.id != TOAST_RACK.lstrip("#") and child.display]
    try:
        rack = screen.query_one(TOAST_RACK)
    except NoMatches:
        return
    if not boxes or not rack.children:
        return
    box = boxes[0].region
    toasts = sum(toast.outer_size.height for toast in rack.children)
    margin = toast_margin(screen.size.height, box.y, box.bottom, toasts)
    if rack.styles.margin.bottom != margin:
        rack.styles.margin = (0, 0, margin, 0)


__all__ = ["keep_toasts_above", "keep_toasts_off_dialogs", "toast_margin"]
