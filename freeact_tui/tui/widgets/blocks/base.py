"""The base of every conversation block: which agent it belongs to and which tool call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import Vertical
from textual.markup import escape
from textual.widget import Widget

from freeact_tui.text.safe import visible

if TYPE_CHECKING:
    from textual.widgets import Markdown

    from freeact_tui.tui.widgets.blocks.markdown_view import ThrottledMarkdown


class Block(Vertical):
    """One entry of the conversation log.

    Args:
        children: Widgets inside the block.
        agent_id: The agent that produced it ("main" or a subagent id).
        corr_id: The tool call it belongs to ("" for plain model text and user messages).
    """

    DEFAULT_CSS = """
    Block {
        height: auto;
        layout: stream;
    }
    """

    def __init__(
        self,
        *children: Widget,
        agent_id: str = "main",
        corr_id: str = "",
        classes: str | None = None,
    ) -> None:
        super().__init__(*children, classes=classes)
        self.agent_id = agent_id
        self.corr_id = corr_id

    def label(self, text: str) -> str:
        """A title naming the agent, e.g. ``[main] Code action`` (markup-escaped, controls shown)."""
        return escape(visible(f"[{self.agent_id}] {text}", multiline=False))


class MarkdownBlock(Block):
    """A block around one markdown view that can be streamed into (responses and thoughts).

    Subclasses compose a ``BlankMarkdown(self._initial)`` somewhere inside.
    """

    def __init__(self, text: str = "", *, agent_id: str = "main", corr_id: str = "") -> None:
        super().__init__(agent_id=agent_id, corr_id=corr_id)
        self._initial = text
        self._stream: ThrottledMarkdown | None = None
        self._parts: list[str] = [text] if text else []
        """The text as streamed, joined when read: appending to one string per chunk copies it all each time."""

    @property
    def text(self) -> str:
        """The block's text so far."""
        if len(self._parts) > 1:
            self._parts[:] = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    @text.setter
    def text(self, value: str) -> None:
        self._parts = [value] if value else []

    @property
    def markdown(self) -> Markdown:
        from textual.widgets import Markdown

        return self.query_one(Markdown)

    async def write(self, chunk: str) -> None:
        """Append a streamed chunk."""
        if self._stream is None:
            from freeact_tui.tui.widgets.blocks.markdown_view import ThrottledMarkdown

            self._stream = ThrottledMarkdown(self.markdown)
        self._parts.append(chunk)
        self._stream.write(chunk)

    async def end_stream(self, full_text: str | None = None) -> None:
        """Stop the stream; render ``full_text`` if nothing was streamed."""
        if not self.is_attached:  # made for a resumed session: composed with its text
            if full_text and not self.text:
                self._initial = self.text = full_text
            return
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        elif full_text and not self.text:
            self.text = full_text
            await self.markdown.update(full_text)
        await self._seal()

    async def _seal(self) -> None:
        from freeact_tui.tui.widgets.blocks.markdown_view import BlankMarkdown

        markdown = self.markdown
        if isinstance(markdown, BlankMarkdown):
            await markdown.seal()  # nothing will be added: its last block is folded too
