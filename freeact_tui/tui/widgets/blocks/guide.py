"""Guidance from the app written in Markdown (how to set up a model): drawn as Markdown, like an answer,
with a notice's border, never as raw marks."""

from __future__ import annotations

from textual.app import ComposeResult

from freeact_tui.text.safe import visible
from freeact_tui.tui.widgets.blocks.base import MarkdownBlock


class GuideBlock(MarkdownBlock):
    """A note of the app in Markdown.

    Args:
        text: Markdown.
        title: The border title.
    """

    DEFAULT_CSS = """
    GuideBlock {
        margin: 1 0 0 0;
        border-left: outer $secondary;
        Markdown { padding: 0 1; margin: 0; background: transparent; }
    }
    """

    def __init__(self, text: str, *, title: str = "") -> None:
        super().__init__(text)
        if title:
            self.border_title = visible(title, multiline=False)

    def compose(self) -> ComposeResult:
        from freeact_tui.tui.widgets.blocks.markdown_view import BlankMarkdown

        yield BlankMarkdown(self._initial, complete=bool(self._initial))
