"""Find in the log (Ctrl+F) and the plain text of a block (what search matches and copy copies).

The bar sits under the log: typing jumps to the first block containing the text (case-insensitive),
Enter/F3 to the next, Shift+Enter/Shift+F3 to the previous, Esc closes. The block shown is marked
with the ``-found`` class; the screen copies it with Ctrl+Y.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Static

if TYPE_CHECKING:  # the blocks load with the first one shown, after the first frame
    from freeact_tui.tui.widgets.blocks import Block

FOUND = "-found"


def block_text(block: Block) -> str:
    """The text a block shows (code of an action, output, answer, …), as plain text."""
    from freeact_tui.tui.widgets.blocks import (
        ActionBlock,
        ExecutionOutputBlock,
        NoticeBlock,
        ToolOutputBlock,
        UserMessageBlock,
    )
    from freeact_tui.tui.widgets.blocks.base import MarkdownBlock

    match block:
        case ActionBlock():
            return block.tool_call.display_text()
        case ExecutionOutputBlock():
            return block.text if block.is_mounted else ""
        case ToolOutputBlock():
            return block.content
        case MarkdownBlock() | UserMessageBlock() | NoticeBlock():
            return block.text
    return ""


def find_blocks(blocks: Sequence[Block], query: str) -> list[Block]:
    """The blocks whose own text contains ``query`` (case-insensitive), in order."""
    needle = query.casefold()
    if not needle:
        return []
    return [b for b in blocks if needle in block_text(b).casefold()]


class FindBar(Horizontal):
    """The find bar; posts ``Jump`` with the block to show (``None``: no match) and ``Closed``."""

    DEFAULT_CSS = """
    FindBar {
        height: 1;
        margin: 0 1;
        display: none;
        background: $boost;
        & > #find-input { border: none; height: 1; padding: 0 1; width: 1fr; background: $boost; }
        & > #find-count { width: auto; color: $text-muted; padding: 0 1; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close find", show=False),
        Binding("f3", "step(1)", "Next match", show=False),
        Binding("shift+f3,shift+enter", "step(-1)", "Previous match", show=False),
    ]

    class Jump(Message):
        def __init__(self, block: Block | None) -> None:
            super().__init__()
            self.block = block

    class Closed(Message):
        pass

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.matches: list[Block] = []
        self.current = -1
        self._blocks: list[Block] = []

    def compose(self) -> ComposeResult:
        yield Input(
            placeholder="Find in the log · Enter/F3 next · Shift+Enter previous · Esc close", id="find-input"
        )
        yield Static("", id="find-count")

    def open(self, blocks: list[Block]) -> None:
        """Show the bar for these blocks and focus it (the previous query is kept and selected)."""
        self._blocks = blocks
        self.display = True
        field = self.query_one(Input)
        field.focus()
        field.select_all()
        self._search(field.value, keep=True)

    def action_close(self) -> None:
        self.display = False
        self._mark(None)
        self.post_message(self.Closed())

    def action_step(self, step: int) -> None:
        if not self.matches:
            return
        self.current = (self.current + step) % len(self.matches)
        self._show()

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        self._search(event.value)

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.action_step(1)

    def _search(self, query: str, keep: bool = False) -> None:
        previous = self.matches[self.current] if keep and 0 <= self.current < len(self.matches) else None
        self.matches = find_blocks([b for b in self._blocks if b.is_attached], query)
        self.current = (
            self.matches.index(previous) if previous in self.matches else (0 if self.matches else -1)
        )
        self._show(query)

    def _show(self, query: str | None = None) -> None:
        count = self.query_one("#find-count", Static)
        if not self.matches:
            text = query if query is not None else self.query_one(Input).value
            count.update("no match" if text else "")
            self._mark(None)
            self.post_message(self.Jump(None))
            return
        count.update(f"{self.current + 1}/{len(self.matches)}")
        block = self.matches[self.current]
        self._mark(block)
        self.post_message(self.Jump(block))

    def _mark(self, block: Block | None) -> None:
        for other in self._blocks:
            if other is not block and other.has_class(FOUND):
                other.remove_class(FOUND)
        if block is not None:
            block.add_class(FOUND)

    @property
    def found(self) -> Block | None:
        """The block the bar shows (``None`` when closed or nothing matches)."""
        if not self.display or not (0 <= self.current < len(self.matches)):
            return None
        return self.matches[self.current]
