"""A message the user sent."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from freeact_tui.text.safe import visible
from freeact_tui.tui.pastes import PASTE_FOLD_LINES
from freeact_tui.tui.widgets.blocks.base import Block
from freeact_tui.tui.widgets.blocks.fold import LogFold

_SHOWN = 3
"""Lines of a long message shown above its fold."""


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
        Collapsible { border-top: none; padding: 0; background: transparent; }
    }
    """

    def __init__(self, text: str, *, agent_id: str = "main") -> None:
        super().__init__(agent_id=agent_id)
        self.text = text

    def compose(self) -> ComposeResult:
        lines = self.text.split("\n")
        if len(lines) <= PASTE_FOLD_LINES:
            yield Static(Content(visible(self.text)), markup=False)
            return
        # A long message (a paste): its first lines, the rest folded (live and resumed alike: from the text).
        yield Static(Content(visible("\n".join(lines[:_SHOWN]))), markup=False)
        with LogFold(title=f"+{len(lines) - _SHOWN} more lines", collapsed=True):
            yield Static(Content(visible("\n".join(lines[_SHOWN:]))), markup=False)
