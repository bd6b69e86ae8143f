"""Model text: one markdown stream a block."""

from __future__ import annotations

from textual.app import ComposeResult

from freeact_tui.tui.widgets.blocks.base import MarkdownBlock


class ResponseBlock(MarkdownBlock):
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
        super().__init__(text, agent_id=agent_id, corr_id=corr_id)
        if agent_id != "main":
            self.add_class("-subagent")
            self.BLANK = False  # type: ignore[misc]  # the border must be painted

    def compose(self) -> ComposeResult:
        from freeact_tui.tui.widgets.blocks.markdown_view import BlankMarkdown  # not before the 1st frame

        yield BlankMarkdown(self._initial, complete=bool(self._initial))

    async def finish(self, full_text: str | None = None) -> None:
        """End the stream; render ``full_text`` if nothing was streamed."""
        await self.end_stream(full_text)
