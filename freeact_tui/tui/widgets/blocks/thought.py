"""Model thinking: streamed into a dimmed markdown view, collapsed once complete."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Collapsible, Markdown

from freeact_tui.tui.widgets.blocks.base import BlankMarkdown, Block, ThrottledMarkdown


class ThoughtBlock(Block):
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
        super().__init__(agent_id=agent_id, corr_id=corr_id)
        self._initial = text
        self._collapsed = collapsed
        self._stream: ThrottledMarkdown | None = None
        self.text = text

    def compose(self) -> ComposeResult:
        with Collapsible(title=self.label("Thinking"), collapsed=self._collapsed):
            yield BlankMarkdown(self._initial)

    @property
    def markdown(self) -> Markdown:
        return self.query_one(Markdown)

    async def write(self, chunk: str) -> None:
        """Append a streamed chunk."""
        if self._stream is None:
            self._stream = ThrottledMarkdown(self.markdown)
        self.text += chunk
        self._stream.write(chunk)

    async def finish(self, full_text: str | None = None, *, collapse: bool = True) -> None:
        """End the stream (rendering ``full_text`` if nothing was streamed); collapse unless told not to."""
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        elif full_text and not self.text:
            self.text = full_text
            await self.markdown.update(full_text)
        if collapse:
            self.collapse()

    def collapse(self) -> None:
        """Fold the thought away (the title still shows it)."""
        self.query_one(Collapsible).collapsed = True
