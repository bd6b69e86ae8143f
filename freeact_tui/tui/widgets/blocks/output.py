"""Execution output of a code action: streamed into a Log that renders ANSI colours safely."""

from __future__ import annotations

import asyncio
from bisect import bisect_right
from pathlib import Path
from typing import ClassVar

from rich.cells import cell_len
from rich.style import Style as RichStyle
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.widget import Widget
from textual.widgets import Collapsible, Log, Static

from freeact_tui.text.safe import sanitize_ansi, strip_sgr
from freeact_tui.tui.widgets.blocks.base import Block
from freeact_tui.tui.widgets.image_preview import ImagePreview, load_cells

_RESET, _DIM, _UNDIM = "\x1b[0m", "\x1b[2m", "\x1b[22m"


def legible(text: Text) -> Text:
    """``text`` with nothing drawn invisibly: concealed text (SGR 8) shown, and a colour on the same
    background colour drawn on the log's own background. Output is text the model reads: the user
    sees it too (#39)."""
    spans = []
    for span in text.spans:
        style = span.style
        if isinstance(style, RichStyle):
            same = (
                style.color is not None
                and style.bgcolor is not None
                and style.color.get_truecolor() == style.bgcolor.get_truecolor()
            )
            if style.conceal or same:
                style = RichStyle(
                    color=style.color,
                    bgcolor=None if same else style.bgcolor,
                    bold=style.bold,
                    dim=style.dim,
                    italic=style.italic,
                    underline=style.underline,
                    strike=style.strike,
                    link=style.link,
                )
        spans.append(span._replace(style=style))
    text.spans = spans
    return text


class AnsiLog(Log):
    """A ``Log`` that renders SGR colours; writes append to the current line, ``\\r`` rewrites it.

    Long lines wrap at the widget's width (a terminal folds them too) instead of being cut.
    Output over ``FOLD_OVER`` rows shows its head, a "… N more lines" row and its tail until
    ``folded`` is cleared (Ctrl+O or a click on that row); the whole text stays selectable.
    """

    DEFAULT_CSS = """
    AnsiLog {
        height: auto;
        background: transparent;
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
        & > .ansi-log--fold { color: $text-muted; text-style: italic; }
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"ansi-log--fold"}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("v", "open_pager", "Pager", id="output.pager", tooltip="The whole output, with search"),
    ]

    class PagerRequested(Message):
        """Open this output in the pager (``v`` on the focused output)."""

        def __init__(self, log: AnsiLog) -> None:
            super().__init__()
            self.log = log

    FOLD_OVER = 20  # more visual rows than this are folded
    HEAD = 10
    TAIL = 8

    @classmethod
    def _process_line(cls, line: str) -> str:
        return strip_sgr(line).expandtabs()

    def __init__(self, *, max_lines: int | None = None) -> None:
        super().__init__(max_lines=max_lines)
        self._row_starts: list[int] = []  # the first visual row of each line (wrapped)
        self._rows = 0
        self._wrap_width = 0
        # Cells of a line's text, by the text (str hashes are cached: a rewrap is cheap).
        self._cells: dict[str, int] = {}
        self.folded = True
        self._pruned = False
        """``max_lines`` dropped lines from the top during the current write."""
        # A line a lone ``\r`` rewrote: what stood there first, and the segments written since.
        self._rewritten: tuple[int, str, list[str]] | None = None

    @property
    def is_foldable(self) -> bool:
        """More rows than fit unfolded: the head, a fold row and the tail are shown while folded."""
        return self._rows > self.FOLD_OVER

    @property
    def shows_fold(self) -> bool:
        return self.folded and self.is_foldable and self._wrap_width > 0

    @property
    def hidden_lines(self) -> int:
        """Lines with at least one row behind the fold row (0 unless folded)."""
        if not self.shows_fold:
            return 0
        first = bisect_right(self._row_starts, self.HEAD) - 1
        last = bisect_right(self._row_starts, self._rows - self.TAIL - 1) - 1
        return last - first + 1

    def set_folded(self, folded: bool) -> None:
        """Fold (head, "… N more lines", tail) or show every row of the output in the log."""
        if folded != self.folded:
            self.folded = folded
            self._rewrap()

    def write(self, data: str, scroll_end: bool | None = None) -> AnsiLog:
        """Append sanitized ``data``; a lone carriage return restarts the current line (progress bars)."""
        data = sanitize_ansi(data).replace("\r\n", "\n")
        since = max(0, len(self._lines) - 1)  # the lines before the last cannot change (unless pruned)
        self._pruned = False
        if "\r" not in data:
            super().write(data, scroll_end)
            self._note_rewrite_text(data)
        else:
            for index, piece in enumerate(data.split("\r")):
                if index and self._lines:
                    self._lines[-1] = self._rewrite_prefix()
                super().write(piece, scroll_end)
                self._note_rewrite_text(piece)
        self._rewrap(0 if self._pruned else since)
        if self.auto_scroll if scroll_end is None else scroll_end:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
        return self

    def _rewrite_prefix(self) -> str:
        """What a line keeps in sight when a lone ``\r`` restarts it: the text it had (a progress bar's
        steps fold into a count, ``REWRITES_SHOWN`` at most are written out), so that nothing the model
        reads of the output is drawn over unseen (#39)."""
        line = len(self._lines) - 1
        current = self._lines[-1]
        if self._rewritten is None or self._rewritten[0] != line:
            if not strip_sgr(current).strip():
                self._rewritten = None
                return ""  # nothing was there to hide
            self._rewritten = (line, current, [])
        else:
            self._rewritten[2].append(current[len(self._rewrite_head()) :])
        return self._rewrite_head()

    def _rewrite_head(self) -> str:
        assert self._rewritten is not None
        _, first, since = self._rewritten
        mark = f"{_RESET}{_DIM}␍{_UNDIM}"
        if len(since) < self.REWRITES_SHOWN:
            return first + "".join(f"{mark}{seg}" for seg in since) + mark
        hidden = len(since) - 1
        return f"{first}{mark}{_DIM} ⋯ {hidden} more rewrites ⋯ {_UNDIM}{mark}{since[-1]}{mark}"

    def _note_rewrite_text(self, text: str) -> None:
        if "\n" in text:
            self._rewritten = None  # a new line: the rewritten one is complete

    REWRITES_SHOWN: ClassVar[int] = 4

    def clear(self) -> AnsiLog:
        super().clear()
        self._rewritten = None
        self._rewrap()
        return self

    def on_resize(self) -> None:
        self._rewrap()

    def _prune_max_lines(self) -> None:
        self._pruned = True  # lines left the top: every row moved
        super()._prune_max_lines()

    def _rewrap(self, since: int = 0) -> None:
        """Count the visual rows of every line from line ``since`` on at the current width (all of them
        when the width changed); the virtual size follows. A write re-counts its own lines, never those
        before them: per write, the work of the whole output made a long one cost the square of its length."""
        width = self.scrollable_content_region.width
        if width != self._wrap_width or since > len(self._row_starts):
            since = 0
        self._wrap_width = width
        starts = self._row_starts
        rows = starts[since] if since < len(starts) else self._rows if since else 0
        del starts[since:]
        known = self._cells
        if len(known) > 2 * len(self._lines) + 64:
            known.clear()
        for index in range(since, self.line_count):
            starts.append(rows)
            rows += self._rows_of(self._lines[index], width)
        self._rows = rows
        self._render_line_cache.clear()
        shown = self.HEAD + 1 + self.TAIL if self.shows_fold else rows
        # A folded block keeps its height while output streams: no layout pass per chunk.
        relayout = shown != self.virtual_size.height
        self.virtual_size = Size(max(width, 0), shown)
        self.refresh(layout=relayout)

    def _rows_of(self, line: str, width: int) -> int:
        """Visual rows of ``line`` at ``width`` (its cells known by its text)."""
        cells = self._cells.get(line)
        if cells is None:
            cells = self._cells[line] = cell_len(self._process_line(line))
        return max(1, -(-cells // width)) if width > 0 else 1

    def _fold_row(self, row: int) -> int | None:
        """The real row shown at visual ``row`` while folded; ``None`` for the fold row itself."""
        if row < self.HEAD:
            return row
        if row == self.HEAD:
            return None
        return self._rows - self.TAIL + row - self.HEAD - 1

    def _fold_strip(self, width: int) -> Strip:
        hidden = self.hidden_lines
        label = f"… {hidden} more line{'s' if hidden != 1 else ''} (ctrl+o or click to expand · alt+o pager)"
        style = self.get_component_rich_style("ansi-log--fold")
        return Strip(Text(label, style=style, end="").render(self.app.console)).crop_extend(0, width, style)

    def action_open_pager(self) -> None:
        self.post_message(self.PagerRequested(self))

    def on_click(self, event: events.Click) -> None:
        if self.shows_fold and event.y + self.scroll_offset.y == self.HEAD:
            event.stop()
            self.set_folded(False)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        row = self.scroll_offset.y + y
        rich_style = self.rich_style
        if not self._row_starts or row >= self._rows or self._wrap_width <= 0:
            return super().render_line(y) if self._wrap_width <= 0 else Strip.blank(width, rich_style)
        if self.shows_fold:
            if row > self.HEAD + self.TAIL:
                return Strip.blank(width, rich_style)
            real = self._fold_row(row)
            if real is None:
                return self._fold_strip(width)
            row = real
        index = bisect_right(self._row_starts, row) - 1
        start = (row - self._row_starts[index]) * self._wrap_width
        strip = self._render_line_strip(index, rich_style)
        return strip.crop_extend(start, start + width, rich_style).apply_offsets(start, index)

    @property
    def plain_text(self) -> str:
        """All output without colour codes."""
        return "\n".join(strip_sgr(line) for line in self._lines).rstrip("\n")

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selection.extract(self.plain_text), "\n"

    def _render_line_strip(self, y: int, rich_style: RichStyle) -> Strip:
        selection = self.text_selection
        if y in self._render_line_cache and selection is None:
            return self._render_line_cache[y]
        line_text = legible(Text.from_ansi(self._lines[y].expandtabs(), no_wrap=True, end=""))
        line_text.stylize_before(rich_style)
        if selection is not None and (span := selection.get_span(y - self._clear_y)) is not None:
            start, end = span
            selection_style = self.screen.get_component_rich_style("screen--selection")
            line_text.stylize(selection_style, start, len(line_text) if end == -1 else end)
        strip = Strip(line_text.render(self.app.console), cell_len(line_text.plain))
        if selection is None:
            self._render_line_cache[y] = strip
        return strip


class ExecutionOutputBlock(Block):
    """Output of one code action: streamed text, then images as file links and the error state."""

    DEFAULT_CSS = """
    ExecutionOutputBlock {
        border-left: outer $primary 40%;
        padding: 0 0 0 1;
        margin: 0 0 0 0;
        &.-error { border-left: outer $error; }
        &.-error AnsiLog { color: $text-error; }
        & > .output-note { color: $text-muted; }
    }
    """

    def __init__(self, *, agent_id: str = "main", corr_id: str = "", text: str = "") -> None:
        super().__init__(agent_id=agent_id, corr_id=corr_id)
        self._initial = text
        self._notes: list[Widget] = []
        self.finished = False
        self.is_error = False

    def compose(self) -> ComposeResult:
        yield AnsiLog(max_lines=5000)
        yield from self._notes

    def on_mount(self) -> None:
        if self._initial:
            self.log_widget.write(self._initial)

    @property
    def log_widget(self) -> AnsiLog:
        return self.query_one(AnsiLog)

    @property
    def text(self) -> str:
        """Everything written so far, without colour codes."""
        return self.log_widget.plain_text if self.is_attached else self._initial

    def write(self, chunk: str) -> None:
        """Append streamed output."""
        self.log_widget.write(chunk)

    async def finish(
        self,
        text: str | None,
        *,
        images: list[Path] | None = None,
        is_error: bool = False,
        truncated: bool = False,
        result_path: Path | None = None,
    ) -> None:
        """Complete the block: the full text if nothing streamed, image links, error marker."""
        if not self.is_attached:  # made for a resumed session: written when it is mounted
            self._initial = self._initial or text or ("" if images else "(no output)")
            self._mark_finished(is_error)
            self._notes = await self._notes_for(images, truncated, result_path)
            return
        if text and not self.log_widget.line_count:
            self.log_widget.write(text)
        if not self.log_widget.line_count and not images:
            self.log_widget.write("(no output)")
        self._mark_finished(is_error)
        notes = await self._notes_for(images, truncated, result_path)
        if notes:
            await self.mount_all(notes)

    def _mark_finished(self, is_error: bool) -> None:
        self.finished = True
        self.is_error = is_error
        self.set_class(is_error, "-error")
        if is_error:
            self.border_title = self.label("Error output")

    async def _notes_for(self, images: list[Path] | None, truncated: bool, result_path: Path | None) -> list[Widget]:
        """Image links with previews, and where a truncated output's full text is."""
        notes: list[Widget] = []
        for image in images or []:
            if not await asyncio.to_thread(image.is_file):  # a resumed session's image, deleted since
                notes.append(Static(Content(f"image: {image} (the file is gone)"), classes="output-note"))
                continue
            notes.append(Static(_file_link("image: ", image), classes="output-note"))
            # A preview under each link; decoding and scaling runs off the event loop.
            strips = await asyncio.to_thread(load_cells, image)
            if strips:
                notes.append(ImagePreview(strips))
        if truncated:
            notes.append(Static(inline_limit_note(result_path), classes="output-note"))
        return notes


def toggle_details(root: Widget) -> None:
    """Ctrl+O: expand every thought and folded output under ``root`` if any is closed, else close all."""
    collapsibles = list(root.query(Collapsible))
    logs = [log for log in root.query(AnsiLog) if log.is_foldable]
    expand = any(c.collapsed for c in collapsibles) or any(log.folded for log in logs)
    for collapsible in collapsibles:
        collapsible.collapsed = not expand
    for log in logs:
        log.set_folded(not expand)


def inline_limit_note(result_path: Path | None) -> Content:
    """What the log says under a result longer than the inline limit: what the model got, where the rest is."""
    told = "Over the inline limit (tool_result_inline_max_bytes): the model got its head and tail; "
    if result_path is None:
        return Content(told + "the full text was not saved (persistence is off).")
    return _file_link(told + "full text: ", result_path)


def _file_link(prefix: str, path: Path) -> Content:
    path = path.expanduser().absolute()
    return Content.assemble(prefix, Content(str(path)).stylize(Style(link=path.as_uri())))
