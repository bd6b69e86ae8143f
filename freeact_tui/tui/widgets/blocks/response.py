"""Model text: one markdown stream a block."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Markdown

from freeact_tui.tui.widgets.blocks.base import BlankMarkdown, Block, ThrottledMarkdown


class ResponseBlock(Block):
    """A response of an agent; ``write`` streams chunks, ``finish`` stops the stream.

    Args:
        text: Initial markdown (a complete response when rendering history).
    """

    DEFAULT_CSS = """
    ResponseBlock {
        margin: 1 0 0 0;
        Markdown { layout: stream; padding: 0 1; margin: 0; background: transparent; }
    }
    ResponseBlock.-subagent { border-left: solid $secondary; }
    """

    BLANK = True  # margins only: skip painting its (tall) area; subagent responses have a border

    def __init__(self, text: str = "", *, agent_id: str = "main", corr_id: str = "") -> None:
        super().__init__(agent_id=agent_id, corr_id=corr_id)
        self._initial = text
        self._stream: ThrottledMarkdown | None = None
        self.text = text
        if agent_id != "main":
            self.add_class("-subagent")
            self.BLANK = False  # type: ignore[misc]  # the border must be painted

    def compose(self) -> ComposeResult:
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

    async def finish(self, full_text: str | None = None) -> None:
        """End the stream; render ``full_text`` if nothing was streamed."""
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        elif full_text and not self.text:
            self.text = full_text
            await self.markdown.update(full_text)
