"""Notifications (toasts) that never cover the prompt, the status bar or the key footer.

Textual docks a screen's toasts at its bottom edge. ``keep_toasts_above(screen, anchor)`` moves them up
to just above ``anchor`` (the prompt) after every layout, so they follow it as it grows by a line.
"""

from __future__ import annotations

from typing import Any

from textual.css.query import NoMatches
from textual.screen import Screen
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


__all__ = ["keep_toasts_above"]
