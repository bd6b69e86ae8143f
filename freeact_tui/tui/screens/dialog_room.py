"""The rows a dialog's scrolling part may take, so that the whole dialog, keys included, fits the screen.

A dialog sizes to its contents up to its ``max-height``; its scrolling part (code, a diff, a list) had a
fixed bound of its own (24 rows), so on a short terminal the parts after it (the keys to answer) fell off
the bottom. CSS cannot say "what the others leave"; ``fit_part`` does, on mount and on every resize, for
every dialog with such a part (approval, trust, undo, diff, rewind).
"""

from __future__ import annotations

from typing import ClassVar, TypeVar

from textual.geometry import Size
from textual.screen import ModalScreen
from textual.widget import Widget

from freeact_tui.tui.widgets.code_view import CodeView

MIN_ROWS = 3
"""Never less than this: a part squeezed to nothing would hide that it has contents."""


def room_for(part: Widget, dialog: Widget, screen: Size) -> int:
    """The rows ``part`` may take inside ``dialog`` on a ``screen`` of this size: the dialog's height
    bound (its ``max-height``, else the screen) less its frame and everything else in it."""
    styles = dialog.styles
    limit = screen.height - styles.margin.height
    if styles.max_height is not None:
        limit = min(limit, int(styles.max_height.resolve(screen, screen)))
    others = sum(
        child.outer_size.height + child.styles.margin.height
        for child in dialog.children
        if child is not part and child.display
    )
    return max(MIN_ROWS, limit - styles.gutter.height - others - part.styles.margin.height)


def fit_part(part: Widget, dialog: Widget, screen: Size, cap: int | None = None) -> None:
    """Bound ``part`` to its room (and to ``cap`` rows on a tall screen); a ``CodeView`` says then what
    is out of sight."""
    room = room_for(part, dialog, screen)
    if cap is not None:
        room = min(room, cap)
    if isinstance(part, CodeView):
        part.fit(room)
    elif part.styles.max_height is None or part.styles.max_height.value != room:
        part.styles.max_height = room


R = TypeVar("R")


class FittedDialog(ModalScreen[R]):
    """A dialog screen whose scrolling part takes what the rest leaves: ``FIT`` names the dialog and the
    part (selectors) and the part's bound on a tall screen; fitted on mount, on resize and on ``refit``."""

    FIT: ClassVar[tuple[str, str, int | None]]

    def on_mount(self) -> None:
        self.refit()

    def on_resize(self) -> None:
        self.refit()

    def refit(self) -> None:
        """Fit the part after the next layout (call it when the rest of the dialog changed)."""
        self.call_after_refresh(self._fit_part)

    def _fit_part(self) -> None:
        dialog, part, cap = self.FIT
        fit_part(self.query_one(part), self.query_one(dialog), self.size, cap)


__all__ = ["MIN_ROWS", "FittedDialog", "fit_part", "room_for"]
