"""The markdown view of responses and thoughts, in a module of its own: Markdown (markdown-it, and
pygments for its code fences) is imported with the first block that shows one, not before the app's
first frame."""

from __future__ import annotations

import asyncio

from markdown_it import MarkdownIt
from markdown_it.token import Token
from textual.await_complete import AwaitComplete
from textual.timer import Timer
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownHeader  # not exported; what ``Markdown.append`` checks
from textual.widgets.markdown import MarkdownBlock, MarkdownStream

from freeact_tui.text.safe import visible
from freeact_tui.tui.widgets.blocks.markdown_fold import FoldedBlocks
from freeact_tui.tui.widgets.blocks.markdown_lines import foldable


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

    Appending costs what is appended plus the last top-level block (which a new fragment may still
    change), never the whole document: Textual's ``append`` rebuilds the whole source and splits it
    into lines on every call, so a long reply streamed in small pieces did work in proportion to the
    text so far per append. Here the source is kept in pieces (joined when read) and the unparsed
    ``_tail`` (the text from the start of the last top-level block) is all that is split and parsed.

    A block that can no longer change (one followed by another, or any once the text is ``complete``) is
    not a widget of its own: it is folded into the ``FoldedBlocks`` widget before it, drawn as lines. Each
    widget costs every layout of the screen, so a reply of N paragraphs as N widgets made each new
    paragraph cost all the others (#40); now a reply is a few widgets whatever its length (a table, which
    ``markdown_lines`` cannot draw, stays a widget and starts a new fold after it).
    """

    BLANK = True

    def __init__(self, markdown: str | None = None, *, complete: bool = False) -> None:
        self.complete = complete
        """No text will be added: the last block is folded too (``seal``; a resumed session's text)."""
        self._pieces: list[str] = []
        """Appended text not yet joined into ``_markdown`` (joined when ``source`` is read)."""
        self._tail = ""
        """The source from line ``_last_parsed_line`` on: the last top-level block and what follows."""
        self._parser: MarkdownIt | None = None
        super().__init__(visible(markdown) if markdown else markdown, parser_factory=literal_parser)

    @property
    def open_block(self) -> str:
        """The source of the last top-level block and what follows it: what the next append re-parses."""
        return self._tail

    @property
    def source(self) -> str:
        if self._pieces:
            self._markdown = "".join([self._markdown or "", *self._pieces])
            self._pieces.clear()
        return self._markdown or ""

    def update(self, markdown: str) -> AwaitComplete:
        shown = visible(markdown)
        self._pieces.clear()
        lines = shown.splitlines(keepends=True)
        self._tail = lines[-1] if lines and not lines[-1].endswith(("\n", "\r")) else ""
        self._markdown = shown
        self._table_of_contents = None
        return AwaitComplete(self._update_folded(shown))

    async def _update_folded(self, markdown: str) -> None:
        """Textual's ``Markdown.update`` with the finished blocks folded (a resumed session's long reply
        is a few widgets, not one per paragraph); the text from the last block's start is the tail that
        appends re-parse (Textual re-parses from the last line only, losing the start of the block)."""
        async with self.lock:
            tokens = await asyncio.get_running_loop().run_in_executor(None, literal_parser().parse, markdown)
            blocks = list(self._parse_markdown(tokens))
            with self.app.batch_update():
                await self.remove_children()
                await self._place(blocks, fold_last=self.complete)
            starts = [token.map[0] for token in tokens if token.map is not None and token.level == 0]
            self._last_parsed_line = starts[-1] if starts else 0
            self._tail = "".join(markdown.splitlines(keepends=True)[self._last_parsed_line :])
        self.post_message(Markdown.TableOfContentsUpdated(self, self.table_of_contents).set_sender(self))

    async def seal(self) -> None:
        """No text will be added: fold the last block too (a finished reply is a few widgets)."""
        self.complete = True
        async with self.lock:
            open_widget = self._open_widget()
            if open_widget is None or not self._tail:
                return
            blocks = list(self._parse_markdown((self._parser or literal_parser()).parse(self._tail)))
            if not blocks or not all(foldable(block) for block in blocks):
                return
            with self.app.batch_update():
                await open_widget.remove()
                await self._place(blocks, fold_last=True)
            self._tail = ""  # text appended after all (never by the log) starts a block of its own

    def append(self, markdown: str) -> AwaitComplete:
        fragment = visible(markdown)
        self._pieces.append(fragment)
        self._tail += fragment
        if self._parser is None:
            self._parser = literal_parser()
        return AwaitComplete(self._append_tail(self._parser, self._tail))

    @property
    def blocks(self) -> list[MarkdownBlock]:
        """The top-level blocks shown, in order: those folded and those that are widgets."""
        shown: list[MarkdownBlock] = []
        for child in self.children:
            if isinstance(child, FoldedBlocks):
                shown.extend(child.folded)
            elif isinstance(child, MarkdownBlock):
                shown.append(child)
        return shown

    def _open_widget(self) -> MarkdownBlock | None:
        """The widget of the last top-level block (the one the next text may still change), if shown."""
        last = self.children[-1] if self.children else None
        return last if isinstance(last, MarkdownBlock) and not isinstance(last, FoldedBlocks) else None

    async def _place(self, blocks: list[MarkdownBlock], *, fold_last: bool = False) -> None:
        """Show ``blocks`` at the end: all but the last (still open) are folded into the ``FoldedBlocks``
        before them (a new one after a block that cannot be folded, a table); the last is a widget unless
        ``fold_last`` (the text is complete)."""
        if not blocks:
            return
        done, last = (blocks, []) if fold_last else (blocks[:-1], blocks[-1:])
        unfolded: list[MarkdownBlock] = []
        fold = self.children[-1] if self.children and isinstance(self.children[-1], FoldedBlocks) else None
        run: list[MarkdownBlock] = []
        for block in done:
            if foldable(block):
                run.append(block)
                continue
            if run:
                fold = await self._fold_into(fold, run, unfolded)
                run = []
            unfolded.append(block)
            fold = None
        if run:
            await self._fold_into(fold, run, unfolded)
        await self.mount_all([*unfolded, *last])

    async def _fold_into(
        self, fold: FoldedBlocks | None, run: list[MarkdownBlock], unfolded: list[MarkdownBlock]
    ) -> FoldedBlocks:
        if fold is None:
            fold = FoldedBlocks(self)
            unfolded.append(fold)
        fold.add(run)
        return fold

    async def _append_tail(self, parser: MarkdownIt, updated_source: str) -> None:
        """Textual's ``Markdown.append`` on the tail alone: re-parse the last block and what follows,
        update the last block widget in place, mount the new ones (the finished ones folded)."""
        async with self.lock:
            tokens = parser.parse(updated_source)
            if _may_continue_a_list(tokens, updated_source):
                return  # the next piece decides: the list goes on (``6.``) or a paragraph starts (``6 cats``)
            open_widget = self._open_widget()
            start_line = self._last_parsed_line
            for token in reversed(tokens):
                if token.map is not None and token.level == 0:
                    done = updated_source.splitlines(keepends=True)[: token.map[0]]
                    self._tail = self._tail[sum(map(len, done)) :]  # later appends only add at the end
                    self._last_parsed_line += token.map[0]
                    break
            new_blocks = list(self._parse_markdown(tokens))
            any_headers = any(isinstance(block, MarkdownHeader) for block in new_blocks)
            for block in new_blocks:
                start, end = block.source_range
                block.source_range = (start + start_line, end + start_line)
            with self.app.batch_update():
                if open_widget is not None and len(new_blocks) == 1:
                    open_widget.source_range = new_blocks[0].source_range
                    try:
                        await open_widget._update_from_block(new_blocks[0])  # the open block grew
                    except IndexError:  # (as in Textual's ``append``) shown as a new block instead
                        await self._place(new_blocks)
                elif new_blocks:
                    if open_widget is not None:  # finished now: folded with the others
                        await open_widget.remove()
                    await self._place(new_blocks)
            if any_headers:
                self._table_of_contents = None
                self.post_message(
                    Markdown.TableOfContentsUpdated(self, self.table_of_contents).set_sender(self)
                )


def _may_continue_a_list(tokens: list[Token], source: str) -> bool:
    """Whether the last top-level block is only digits after a list, so far: the start of the list's next
    item (``4. a`` + blank + ``6`` is read as a paragraph until ``. b`` comes, then as one list of 4, 5 items).
    Folding the list then would draw two lists where the whole text draws one."""
    tops = [token for token in tokens if token.level == 0 and token.map is not None and token.nesting >= 0]
    if len(tops) < 2 or tops[-1].type != "paragraph_open" or tops[-2].type != "ordered_list_open":
        return False
    assert tops[-1].map is not None
    last = "".join(source.splitlines(keepends=True)[tops[-1].map[0] :]).strip()
    return last.isdigit() and len(last) <= 9  # CommonMark: an ordered list marker has at most 9 digits


OPEN_BLOCK_RATE = 100_000
"""Characters of the open (last) block re-drawn per second of waiting, at most: see ``flush_interval``."""


def flush_interval(base: float, open_block: int) -> float:
    """Seconds streamed text waits before it is shown, when the block it grows holds ``open_block``
    characters: ``base``, or longer in proportion to that block.

    Each flush re-parses, re-wraps and re-draws the open block whole (a paragraph can only be laid out
    whole), while the pieces that arrive between flushes come at a steady rate. With a fixed interval a
    reply that is one long paragraph costs the square of its length (the attack: 120 KB of "word " took
    minutes); with the wait in proportion to the block, the block grows by a steady fraction per flush,
    and the re-drawing sums to a steady multiple of the text.
    """
    return max(base, open_block / OPEN_BLOCK_RATE)


class ThrottledMarkdown:
    """Feeds a ``MarkdownStream`` at most every ``interval`` seconds (longer for a long open block,
    ``flush_interval``).

    Each append re-lays out the screen, so many tiny appends cost far more than a few larger ones;
    batching keeps throughput high while the text still appears within ``interval``.

    Args:
        markdown: The widget to stream into.
        interval: The longest time text waits before it is shown, while the open block is short.
    """

    def __init__(self, markdown: Markdown, interval: float = 0.2) -> None:
        self._markdown = markdown
        self._interval = interval
        self.flushes = 0
        """Flushes so far (what a test of the bound counts)."""
        self._stream: MarkdownStream | None = None
        self._pending: list[str] = []
        self._timer: Timer | None = None

    def write(self, chunk: str) -> None:
        """Queue ``chunk``; it is shown at the next flush."""
        if not chunk:
            return
        self._pending.append(chunk)
        if self._timer is None:
            wait = flush_interval(self._interval, self.open_block())
            self._timer = self._markdown.set_timer(wait, self._flush)

    def open_block(self) -> int:
        """Characters of the block the next text grows (re-drawn whole by each flush)."""
        markdown = self._markdown
        return len(markdown.open_block) if isinstance(markdown, BlankMarkdown) else 0

    async def _flush(self) -> None:
        self._timer = None
        if not self._pending:
            return
        text = "".join(self._pending)
        self._pending.clear()
        self.flushes += 1
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
