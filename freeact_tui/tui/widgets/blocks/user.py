"""A message the user sent."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from freeact_tui.textsafe import visible
from freeact_tui.tui.widgets.blocks.base import Block


class UserMessageBlock(Block):
    """The user's prompt, shown verbatim (never parsed as markup).

    Args:
        text: The prompt text.
    """

    DEFAULT_CSS = """
    UserMessageBlock {
        border-left: thick $primary;
        background: $boost;
        padding: 0 1;
        margin: 1 0 0 0;
        & > Static { width: 1fr; }
    }
    """

    def __init__(self, text: str, *, agent_id: str = "main") -> None:
        super().__init__(agent_id=agent_id)
        self.text = text

    def compose(self) -> ComposeResult:
        yield Static(Content(visible(self.text)), markup=False)
