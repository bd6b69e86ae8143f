"""The markdown view of responses and thoughts, in a module of its own: Markdown (markdown-it, and
pygments for its code fences) is imported with the first block that shows one, not before the app's
first frame."""

from __future__ import annotations

from markdown_it import MarkdownIt
from textual.await_complete import AwaitComplete
from textual.timer import Timer
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream

from freeact_tui.text.safe import visible


def literal_parser() -> MarkdownIt:
    """Textual's "gfm-like" markdown without raw HTML and entities: such text is shown as written.

    With HTML on, a reply like ``<tools>{…}</tools>`` is an HTML block that renders as nothing, and
    inline tags vanish from their paragraph; a model's reply must never lose characters.
    """
    return MarkdownIt("gfm-like", {"html": False}).disable("entity")


class BlankMarkdown(Markdown):
    """A ``Markdown`` that paints no content of its own (its blocks do); HTML-like text is shown literally.

    A plain widget renders every line of its full height whenever its size changes; a growing
    response would re-render hundreds of blank lines per append. Control characters are shown,
    never sent to the terminal (Textual passes ESC in markdown and code fences through as is).
    """

    BLANK = True

    def __init__(self, markdown: str | None = None) -> None:
        super().__init__(visible(markdown) if markdown else markdown, parser_factory=literal_parser)

    def update(self, markdown: str) -> AwaitComplete:
        return super().update(visible(markdown))

    def append(self, markdown: str) -> AwaitComplete:
        return super().append(visible(markdown))


class ThrottledMarkdown:
    """Feeds a ``MarkdownStream`` at most every ``interval`` seconds.

    Each append re-lays out the screen, so many tiny appends cost far more than a few larger ones;
    batching keeps throughput high while the text still appears within ``interval``.

    Args:
        markdown: The widget to stream into.
        interval: The longest time text waits before it is shown.
    """

    def __init__(self, markdown: Markdown, interval: float = 0.2) -> None:
        self._markdown = markdown
        self._interval = interval
        self._stream: MarkdownStream | None = None
        self._pending: list[str] = []
        self._timer: Timer | None = None

    def write(self, chunk: str) -> None:
        """Queue ``chunk``; it is shown at the next flush."""
        if not chunk:
            return
        self._pending.append(chunk)
        if self._timer is None:
            self._timer = self._markdown.set_timer(self._interval, self._flush)

    async def _flush(self) -> None:
        self._timer = None
        if not self._pending:
            return
        text = "".join(self._pending)
        self._pending.clear()
        if self._stream is None:
            self._stream = Markdown.get_stream(self._markdown)
        await self._stream.write(text)

    async def stop(self) -> None:
        """Show what is pending and end the stream."""
        if self._timer is not None:
            self._timer.stop()
        await self._flush()
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None


__all__ = ["BlankMarkdown", "ThrottledMarkdown", "literal_parser"]
