"""Execution output of a code action: streamed into a Log that renders ANSI colours safely."""

from __future__ import annotations

import asyncio
from bisect import bisect_right
from pathlib import Path

from rich.cells import cell_len
from rich.style import Style as RichStyle
from rich.text import Text
from textual.app import ComposeResult
from textual.content import Content
from textual.geometry import Size
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.widget import Widget
from textual.widgets import Log, Static

from freeact_tui.textsafe import sanitize_ansi, strip_sgr
from freeact_tui.tui.widgets.blocks.base import Block
from freeact_tui.tui.widgets.image_preview import ImagePreview, load_cells


class AnsiLog(Log):
    """A ``Log`` that renders SGR colours; writes append to the current line, ``\\r`` rewrites it.

    Long lines wrap at the widget's width (a terminal folds them too) instead of being cut.
    """

    DEFAULT_CSS = """
    AnsiLog {
        height: auto;
        max-height: 20;
        background: transparent;
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
    }
    """

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

    def write(self, data: str, scroll_end: bool | None = None) -> AnsiLog:
        """Append sanitized ``data``; a lone carriage return restarts the current line (progress bars)."""
        data = sanitize_ansi(data).replace("\r\n", "\n")
        if "\r" not in data:
            super().write(data, scroll_end)
        else:
            for index, piece in enumerate(data.split("\r")):
                if index and self._lines:
                    self._lines[-1] = ""
                super().write(piece, scroll_end)
        self._rewrap()
        if self.auto_scroll if scroll_end is None else scroll_end:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
        return self

    def clear(self) -> AnsiLog:
        super().clear()
        self._rewrap()
        return self

    def on_resize(self) -> None:
        self._rewrap()

    def _rewrap(self) -> None:
        """Count the visual rows of every line at the current width; the virtual size follows."""
        width = self.scrollable_content_region.width
        self._wrap_width = width
        starts: list[int] = []
        rows = 0
        known = self._cells
        if len(known) > 2 * len(self._lines) + 64:
            known.clear()
        for index in range(self.line_count):
            starts.append(rows)
            line = self._lines[index]
            cells = known.get(line)
            if cells is None:
                cells = known[line] = cell_len(self._process_line(line))
            rows += max(1, -(-cells // width)) if width > 0 else 1
        self._row_starts, self._rows = starts, rows
        self._render_line_cache.clear()
        self.virtual_size = Size(max(width, 0), rows)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        row = self.scroll_offset.y + y
        rich_style = self.rich_style
        if not self._row_starts or row >= self._rows or self._wrap_width <= 0:
            return super().render_line(y) if self._wrap_width <= 0 else Strip.blank(width, rich_style)
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
        line_text = Text.from_ansi(self._lines[y].expandtabs(), no_wrap=True, end="")
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
        self.finished = False
        self.is_error = False

    def compose(self) -> ComposeResult:
        yield AnsiLog(max_lines=5000)

    def on_mount(self) -> None:
        if self._initial:
            self.log_widget.write(self._initial)

    @property
    def log_widget(self) -> AnsiLog:
        return self.query_one(AnsiLog)

    @property
    def text(self) -> str:
        """Everything written so far, without colour codes."""
        return self.log_widget.plain_text

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
        if text and not self.log_widget.line_count:
            self.log_widget.write(text)
        if not self.log_widget.line_count and not images:
            self.log_widget.write("(no output)")
        self.finished = True
        self.is_error = is_error
        self.set_class(is_error, "-error")
        if is_error:
            self.border_title = self.label("Error output")
        notes: list[Widget] = []
        for image in images or []:
            notes.append(Static(_file_link("image: ", image), classes="output-note"))
            # A preview under each link; decoding and scaling runs off the event loop.
            strips = await asyncio.to_thread(load_cells, image)
            if strips:
                notes.append(ImagePreview(strips))
        if truncated:
            note = (
                _file_link("output truncated; full result: ", result_path)
                if result_path
                else Content("output truncated")
            )
            notes.append(Static(note, classes="output-note"))
        if notes:
            await self.mount_all(notes)


def _file_link(prefix: str, path: Path) -> Content:
    path = path.expanduser().absolute()
    return Content.assemble(prefix, Content(str(path)).stylize(Style(link=path.as_uri())))
