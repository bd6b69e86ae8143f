"""Errors and informational notes in the conversation (cancelled turns, damaged sessions, …)."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from freeact_tui.text.safe import visible
from freeact_tui.tui.widgets.blocks.base import Block


class NoticeBlock(Block):
    """An informational note from the app (not from the model).

    Args:
        text: Plain text, shown verbatim (and what a copy of the block takes).
        title: Optional border title.
        rows: ``(label, value)`` rows to draw instead of ``text`` as two columns, a long value wrapping in
            its own column (``/status``, ``/config``: a path never wraps back under the labels).
    """

    DEFAULT_CSS = """
    NoticeBlock {
        color: $text-muted;
        padding: 0 1;
        margin: 1 0 0 0;
        border-left: outer $secondary;
    }
    """

    def __init__(
        self,
        text: str,
        *,
        title: str = "",
        agent_id: str = "main",
        corr_id: str = "",
        rows: Sequence[tuple[str, str]] = (),
    ) -> None:
        super().__init__(agent_id=agent_id, corr_id=corr_id)
        self.text = text
        self.rows = [(visible(label, multiline=False), visible(value)) for label, value in rows]
        if title:
            self.border_title = visible(title, multiline=False)
        self.set_class(bool(self.rows), "-rows")

    def compose(self) -> ComposeResult:
        if self.rows:
            from freeact_tui.tui.widgets.columns import Columns

            width = max(len(label) for label, _ in self.rows)
            yield Columns(self.rows, width, "bold", gap=2)
            return
        yield Static(Content(visible(self.text)), markup=False)


class ErrorBlock(NoticeBlock):
    """An error the user must see; clearly marked with the theme's error colour."""

    DEFAULT_CSS = """
    ErrorBlock {
        color: $text-error;
        background: $error-muted;
        border: round $error;
        border-title-color: $text-error;
        border-title-style: bold;
    }
    """

    def __init__(self, text: str, *, title: str = "Error", agent_id: str = "main", corr_id: str = "") -> None:
        super().__init__(text, title=title, agent_id=agent_id, corr_id=corr_id)
