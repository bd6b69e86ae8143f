"""Model thinking: streamed into a dimmed markdown view, collapsed once complete."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Collapsible

from freeact_tui.tui.widgets.blocks.base import MarkdownBlock
from freeact_tui.tui.widgets.blocks.fold import LogFold


class ThoughtBlock(MarkdownBlock):
    """Thoughts of an agent; ``write`` streams chunks, ``finish`` collapses the block.

    Args:
        text: Initial markdown (a complete thought when rendering history).
        collapsed: Start collapsed (history) or open (streaming).
    """

    DEFAULT_CSS = """
    ThoughtBlock {
        margin: 1 0 0 0;
        Collapsible { border-top: none; padding-bottom: 0; background: transparent; }
        Markdown { layout: stream; color: $text-muted; text-style: italic; padding: 0 0 0 1; margin: 0; }
    }
    """

    BLANK = True  # margins only: skip painting its (tall) area

    def __init__(
        self, text: str = "", *, collapsed: bool = False, agent_id: str = "main", corr_id: str = ""
    ) -> None:
        super().__init__(text, agent_id=agent_id, corr_id=corr_id)
        self._collapsed = collapsed

    def compose(self) -> ComposeResult:
        from freeact_tui.tui.widgets.blocks.markdown_view import BlankMarkdown  # not before the 1st frame

        with LogFold(title=self.label("Thinking"), collapsed=self._collapsed):
            yield BlankMarkdown(self._initial, complete=bool(self._initial))

    async def finish(self, full_text: str | None = None, *, collapse: bool = True) -> None:
        """End the stream (rendering ``full_text`` if nothing was streamed); collapse unless told not to."""
        await self.end_stream(full_text)
        if collapse:
            self.collapse()

    def collapse(self) -> None:
        """Fold the thought away (the title still shows it)."""
        if not self.is_attached:  # made for a resumed session: composed folded
            self._collapsed = True
            return
        self.query_one(Collapsible).collapsed = True
