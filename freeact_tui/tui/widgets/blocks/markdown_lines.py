"""Finished markdown blocks drawn as lines of ``Content``, as Textual's markdown widgets lay them out.

Textual's ``Markdown`` is a widget per block (a list is a widget per item and more), and every layout of
the screen visits every widget: a long reply of many paragraphs made each new paragraph cost the whole
screen (#40). A block that can no longer change is drawn here instead, into the lines of one
``FoldedBlocks`` widget (``markdown_fold``), by the rules of Textual's markdown CSS: a paragraph wraps at
the width and has a blank line under it at the top level, a heading has its margins and its colours, a
fence is padded and not wrapped (cut at the width, as its scrolling view shows it), a quote has its bar,
a list its bullets with the items' text hanging beside them; margins between blocks collapse as in the
stream layout. Only what this module knows how to draw is folded (``foldable``): a table (a grid of
widgets) stays a widget of its own.

Styles that depend on the theme are named as component classes (``.fold--h1`` …, resolved by the widget
that draws the lines), never as colours, so a change of theme draws them anew.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from textual.content import Content
from textual.widgets._markdown import (  # the block kinds are not exported; they are what Markdown makes
    MarkdownBlock,
    MarkdownBlockQuote,
    MarkdownBulletList,
    MarkdownFence,
    MarkdownHeader,
    MarkdownHorizontalRule,
    MarkdownListItem,
    MarkdownOrderedList,
    MarkdownOrderedListItem,
    MarkdownParagraph,
)

QUOTE_BAR = "▌"
"""The left edge of a quote (``border-left: outer``)."""
FENCE_PAD = 2
"""Cells of padding left and right of a fence's code (and a blank line above and below it)."""


@dataclass(frozen=True)
class Drawn:
    """A block as lines, with the blank lines wanted above and below it (its margins, collapsed with the
    neighbours' by whoever stacks it)."""

    lines: list[Content]
    top: int = 0
    bottom: int = 0


@dataclass(frozen=True)
class Look:
    """What a drawing depends on besides the width: how fences are highlighted, and whether the document
    lays its blocks out as a stream (``layout: stream``, a reply's: every block as wide as the document and
    as tall as its content and padding, whatever its CSS height) or vertically (Textual's default)."""

    ansi: bool = False
    dark: bool = True
    stream: bool = False


def foldable(block: MarkdownBlock) -> bool:
    """Whether ``draw`` knows how to draw ``block`` and everything inside it (a table, or a block of an
    unknown kind, stays a widget)."""
    if isinstance(block, MarkdownFence):
        return True
    if isinstance(block, MarkdownParagraph | MarkdownHeader | MarkdownHorizontalRule):
        return not block._blocks
    if isinstance(block, MarkdownBlockQuote):
        return all(foldable(child) for child in block._blocks)
    if isinstance(block, MarkdownBulletList | MarkdownOrderedList):
        return all(
            isinstance(item, MarkdownListItem) and all(foldable(child) for child in item._blocks)
            for item in block._blocks
        )
    return False


def margins(block: MarkdownBlock, *, top_level: bool = True) -> tuple[int, int]:
    """The blank lines ``block`` wants above and below it (Textual's markdown CSS)."""
    if isinstance(block, MarkdownHeader):
        return (2 if block.LEVEL <= 2 else 1), 1
    if isinstance(block, MarkdownHorizontalRule):
        return 0, 1
    if isinstance(block, MarkdownFence | MarkdownBlockQuote):
        return 1, 1
    return 0, (1 if top_level else 0)  # a paragraph or a list: a blank line under it at the top level


def draw(block: MarkdownBlock, width: int, look: Look, *, top_level: bool = True) -> Drawn:
    """``block`` as lines at most ``width`` cells wide (``top_level``: a child of the document, where a
    paragraph or a list keeps a blank line under it)."""
    width = max(width, 1)
    top, bottom = margins(block, top_level=top_level)
    return Drawn(_lines(block, width, look, streamed=look.stream and top_level), top, bottom)


def _lines(block: MarkdownBlock, width: int, look: Look, *, streamed: bool) -> list[Content]:
    """``streamed``: laid out by a stream layout (a top-level block of a reply)."""
    if isinstance(block, MarkdownHeader):
        return _header(block, width, full_width=streamed)
    if isinstance(block, MarkdownHorizontalRule):  # padding-top: 1, then the rule (its border) …
        blank = [Content("")] * (
            2 if streamed else 1
        )  # … under an empty line where ``height: 1`` is not read
        return [*blank, Content("─" * width).stylize_before(".fold--hr")]
    if isinstance(block, MarkdownFence):
        return _fence(block, width, look)
    if isinstance(block, MarkdownBlockQuote):
        return _quote(block, width, look)
    if isinstance(block, MarkdownBulletList | MarkdownOrderedList):
        return _list(block, width, look)
    return block._content.wrap(width) or [Content("")]


def stack(drawn: Sequence[Drawn]) -> list[Content]:
    """Blocks one under the other, the margin between two the larger of the two (as Textual lays them
    out); the first block's top margin and the last one's bottom margin are left to the caller."""
    lines: list[Content] = []
    for index, part in enumerate(drawn):
        if index:
            lines.extend(Content("") for _ in range(max(drawn[index - 1].bottom, part.top)))
        lines.extend(part.lines)
    return lines


def boxed(drawn: Sequence[Drawn]) -> list[Content]:
    """Blocks stacked inside a container: their outer margins are inside it too."""
    if not drawn:
        return []
    return [
        *(Content("") for _ in range(drawn[0].top)),
        *stack(drawn),
        *(Content("") for _ in range(drawn[-1].bottom)),
    ]


def _padded(line: Content, width: int) -> Content:
    room = width - line.cell_length
    return line + Content(" " * room) if room > 0 else line


def _header(block: MarkdownHeader, width: int, *, full_width: bool) -> list[Content]:
    level = block.LEVEL
    style = f".fold--h{level}"
    auto = level == 3 and not full_width  # ``width: auto``: as wide as its text
    # Textual sizes an auto-width heading to its whole text: one line, cut at the edge (never wrapped)
    lines = ([block._content] if auto else block._content.wrap(width)) or [Content("")]
    if level == 1:  # the lines as one block, centred across the width (``content-align: center``)
        room = max(0, width - max(line.cell_length for line in lines))
        lines = [Content(" " * (room // 2)) + line for line in lines]
    fill = max(line.cell_length for line in lines) if auto else width
    return [_padded(line, fill).stylize_before(style) for line in lines]


def _fence(block: MarkdownFence, width: int, look: Look) -> list[Content]:
    code = MarkdownFence.highlight(block.code, block.lexer, ansi=look.ansi, dark=look.dark)
    pad = Content(" " * FENCE_PAD)
    body = [pad + line + pad for line in code.split("\n", allow_blank=True)]
    lines = [Content(""), *body, Content("")]
    return [_padded(_cut(line, width), width).stylize_before(".fold--fence") for line in lines]


def _cut(line: Content, width: int) -> Content:
    """``line`` cut to ``width`` cells (a fence scrolls sideways: what does not fit is out of sight)."""
    if line.cell_length <= width:
        return line
    return line.truncate(width)


def _quote(block: MarkdownBlockQuote, width: int, look: Look) -> list[Content]:
    inner = max(1, width - 3)  # the bar, a cell of padding each side
    children = boxed([draw(child, inner, look, top_level=False) for child in block._blocks])
    bar = Content(QUOTE_BAR).stylize(".fold--quote-bar")
    return [
        (bar + Content(" ") + _padded(line, inner) + Content(" ")).stylize_before(".fold--quote")
        for line in children
    ]


def _list(block: MarkdownBlock, width: int, look: Look) -> list[Content]:
    items = [item for item in block._blocks if isinstance(item, MarkdownListItem)]
    symbols = _symbols(block, items)
    lines: list[Content] = []
    for item, symbol in zip(items, symbols, strict=True):
        indent = cell_len(symbol)
        body = boxed([draw(child, width - indent, look, top_level=False) for child in item._blocks]) or [
            Content("")
        ]
        lines.append(Content(symbol).stylize(".fold--bullet") + body[0])
        lines.extend(Content(" " * indent) + line for line in body[1:])
    return lines


def _symbols(block: MarkdownBlock, items: list[MarkdownListItem]) -> list[str]:
    """The bullets of a list's items as Textual draws them (an ordered list's numbers right-aligned)."""
    if not isinstance(block, MarkdownOrderedList):
        return [item.bullet for item in items]
    start = 1
    if items and isinstance(items[0], MarkdownOrderedListItem):
        try:
            start = int(items[0].bullet)
        except ValueError:
            pass
    numbers = [f"{number}. " for number in range(start, start + len(items))]
    size = max((len(n) for n in numbers), default=0)
    return [n.rjust(size + 1) for n in numbers]


__all__ = ["Drawn", "Look", "boxed", "draw", "foldable", "margins", "stack"]
