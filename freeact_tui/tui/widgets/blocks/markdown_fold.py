"""One widget for a run of finished markdown blocks: the widget count of a long reply stays bounded.

Every layout of the screen visits every widget, and Textual's ``Markdown`` makes a widget of each block:
a streamed reply of 1,200 paragraphs was 1,200 widgets, and each new one cost all of them (#40: 120 KB
took 33 s, 360 KB over 300 s). ``BlankMarkdown`` gives each block that can no longer change to the
``FoldedBlocks`` before it, which draws its blocks as lines (``markdown_lines``) and appends to them: a
new block costs its own lines, never the ones before it. The lines are drawn again only when the width
or the theme changes.

The text is selectable as in any widget of the log (``get_selection``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from markdown_it.token import Token
from textual.content import Content
from textual.css.styles import RulesMap
from textual.geometry import Size
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions
from textual.widget import Widget
from textual.widgets.markdown import MarkdownBlock

from freeact_tui.tui.widgets.blocks.markdown_lines import Drawn, Look, draw, margins

if TYPE_CHECKING:
    from textual.widgets import Markdown


MARGIN_CLASSES = ("-margin-0-1", "-margin-1-0", "-margin-1-1", "-margin-2-0", "-margin-2-1")
"""The margins a fold can have (``markdown_lines.margins``: top 0 to 2, bottom 0 or 1), as CSS classes."""

_ONE_LINE = RulesMap(text_wrap="nowrap", text_overflow="clip")
"""A drawn line is never wrapped again (it fits: ``markdown_lines`` wrapped it)."""


class FoldedBlocks(MarkdownBlock):
    """Finished top-level blocks of a ``Markdown``, drawn as lines by one widget.

    Args:
        markdown: The document the blocks belong to.
    """

    DEFAULT_CSS = """
    FoldedBlocks {
        height: auto;
        &.-margin-0-1 { margin: 0 0 1 0; }
        &.-margin-1-0 { margin: 1 0 0 0; }
        &.-margin-1-1 { margin: 1 0 1 0; }
        &.-margin-2-0 { margin: 2 0 0 0; }
        &.-margin-2-1 { margin: 2 0 1 0; }
        & > .fold--h1 { color: $markdown-h1-color; background: $markdown-h1-background; text-style: $markdown-h1-text-style; }
        & > .fold--h2 { color: $markdown-h2-color; background: $markdown-h2-background; text-style: $markdown-h2-text-style; }
        & > .fold--h3 { color: $markdown-h3-color; background: $markdown-h3-background; text-style: $markdown-h3-text-style; }
        & > .fold--h4 { color: $markdown-h4-color; background: $markdown-h4-background; text-style: $markdown-h4-text-style; }
        & > .fold--h5 { color: $markdown-h5-color; background: $markdown-h5-background; text-style: $markdown-h5-text-style; }
        & > .fold--h6 { color: $markdown-h6-color; background: $markdown-h6-background; text-style: $markdown-h6-text-style; }
        & > .fold--hr { color: $secondary; }
        & > .fold--fence { color: rgb(210,210,210); background: black 10%; }
        &:light > .fold--fence { background: white 30%; }
        & > .fold--quote { background: $boost; }
        & > .fold--quote-bar { color: $text-primary 50%; }
        &:light > .fold--quote-bar { color: $text-secondary; }
        & > .fold--bullet { color: $text-primary; }
        &:light > .fold--bullet { color: $text-secondary; }
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        *MarkdownBlock.COMPONENT_CLASSES,
        *(f"fold--h{level}" for level in range(1, 7)),
        "fold--hr",
        "fold--fence",
        "fold--quote",
        "fold--quote-bar",
        "fold--bullet",
    }

    def __init__(self, markdown: Markdown) -> None:
        super().__init__(markdown, Token("folded_blocks", "", 0))
        self.folded: list[MarkdownBlock] = []
        """The blocks drawn here, in order (never mounted)."""
        self._drawn: list[Drawn] = []
        """``folded`` drawn at ``_width`` (the first ``len(_drawn)`` of them)."""
        self._lines: list[Content] = []
        self._width = -1
        self._strips: dict[int, Strip] = {}
        self._drawn_look: Look | None = None

    def add(self, blocks: list[MarkdownBlock]) -> None:
        """Append finished blocks: drawn when next laid out, after the lines already drawn."""
        if not blocks:
            return
        top = margins(self.folded[0] if self.folded else blocks[0])[0]
        bottom = margins(blocks[-1])[1]
        self.folded.extend(blocks)
        # The margins as one class (the stream layout of a reply reads only the margins of the CSS, and two
        # classes that set the top and the bottom would each set all four).
        self.remove_class(*MARGIN_CLASSES)
        if (top, bottom) != (0, 0):
            self.add_class(f"-margin-{top}-{bottom}")
        self.refresh(layout=True)

    @property
    def plain_text(self) -> str:
        """The lines as shown, without styles (what a selection copies from)."""
        self._draw(self._width if self._width > 0 else 80)
        return "\n".join(line.plain.rstrip() for line in self._lines)

    def _look(self) -> Look:
        layout = self.parent.styles.layout if isinstance(self.parent, Widget) else None
        stream = layout is not None and layout.name == "stream"
        return Look(ansi=self.app.native_ansi_color, dark=self.app.current_theme.dark, stream=stream)

    def _draw(self, width: int) -> None:
        """Draw what is not drawn yet at ``width`` (all of it again when the width or the look changed)."""
        if width != self._width:
            self._width, self._drawn, self._lines = width, [], []
            self._strips.clear()
        if len(self._drawn) == len(self.folded):
            return
        look = self._drawn_look = self._look()
        for block in self.folded[len(self._drawn) :]:
            part = draw(block, width, look)
            if self._drawn:
                gap = max(self._drawn[-1].bottom, part.top)
                self._lines.extend(Content("") for _ in range(gap))
            self._lines.extend(part.lines)
            self._drawn.append(part)

    def notify_style_update(self) -> None:
        """A new style: render the lines again (their styles are looked up when rendered); a new theme
        that changes how fences are highlighted (dark, ANSI): draw them again."""
        self._strips.clear()
        if self._drawn_look is not None and self.is_attached and self._look() != self._drawn_look:
            self._width = -1
        super().notify_style_update()

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return container.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._draw(width)
        return len(self._lines)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        self._draw(width)
        selection = self.text_selection
        if selection is None and (cached := self._strips.get(y)) is not None:
            return cached
        style = self.visual_style
        if y >= len(self._lines):
            return Strip.blank(width, style.rich_style)
        line = self._lines[y]
        if selection is not None and (span := selection.get_span(y)) is not None:
            start, end = span
            selected = Style.from_styles(self.screen.get_component_styles("screen--selection"))
            line = line.stylize(selected, start, len(line) if end == -1 else end)
        options = RenderOptions(self._get_style, _ONE_LINE)
        rendered = line.render_strips(width, 1, style, options)
        strip = rendered[0] if rendered else Strip.blank(0)
        strip = strip.extend_cell_length(width, style.rich_style).crop(0, width).apply_offsets(0, y)
        if selection is None:
            self._strips[y] = strip
        return strip

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selection.extract(self.plain_text), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self._strips.clear()
        self.refresh()


__all__ = ["FoldedBlocks"]
