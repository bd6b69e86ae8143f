"""The reader's place in the log, kept while blocks above or around it change height (Ctrl+O expanding or
collapsing every detail): the top-level block at the top of the view (or the focused one, if in view)
stays at the same row of the screen."""

from __future__ import annotations

from dataclasses import dataclass

from textual.containers import ScrollableContainer
from textual.widget import Widget


@dataclass(frozen=True)
class LogPlace:
    """A block of the log and its row in the view (negative: its top is above the view)."""

    block: Widget | None
    row: int
    following: bool

    @classmethod
    def of(cls, log: ScrollableContainer, following: bool, focused: Widget | None = None) -> LogPlace:
        """Where the reader is in ``log`` now (``following``: the log stays on its latest output)."""
        top = round(log.scroll_y)
        shown = [child for child in log.children if child.display]
        held = _top_level(log, focused)
        if held is not None and _in_view(held, top, log.scrollable_content_region.height):
            return cls(held, held.virtual_region.y - top, following)
        for child in shown:
            if child.virtual_region.bottom > top:
                return cls(child, child.virtual_region.y - top, following)
        return cls(None, 0, following)

    def restore(self, log: ScrollableContainer) -> None:
        """Scroll ``log`` so that the block is at its row again (a following log keeps following)."""
        if self.following or self.block is None or not self.block.is_attached:
            return
        log.scroll_to(y=max(0, self.block.virtual_region.y - self.row), animate=False, immediate=True)


def _top_level(log: Widget, widget: Widget | None) -> Widget | None:
    """The child of ``log`` that holds ``widget`` (None: not in the log)."""
    node = widget
    while node is not None and node.parent is not log:
        parent = node.parent
        node = parent if isinstance(parent, Widget) else None
    return node


def _in_view(block: Widget, top: int, height: int) -> bool:
    region = block.virtual_region
    return region.bottom > top and region.y < top + height
