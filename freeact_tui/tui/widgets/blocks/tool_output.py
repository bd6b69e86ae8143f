"""The result of a JSON tool call or built-in operation, collapsed by default."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Collapsible, Static

from freeact_tui.text.safe import one_line_summary, visible
from freeact_tui.tui.widgets.blocks.base import Block
from freeact_tui.tui.widgets.blocks.fold import LogFold
from freeact_tui.tui.widgets.blocks.output import inline_limit_note
from freeact_tui.tui.widgets.image_preview import ImagePreview, load_cells

_PREVIEW_LINES = 1


class ToolOutputBlock(Block):
    """Tool output; the title shows the first line so the user can decide to expand it.

    Args:
        content: The output text, shown verbatim.
        image: An image the tool gave the model, previewed under the output.
        is_error: The tool failed.
        kind: What the output is, shown in the title ("Tool output" by default).
        truncated: Longer than the inline limit: the model got its head and tail only.
        result_path: Where the full text was saved (None: persistence is off).
    """

    DEFAULT_CSS = """
    ToolOutputBlock {
        margin: 1 0 0 0;
        Collapsible { border-top: none; padding-bottom: 0; background: transparent; }
        & > .output-note { color: $text-muted; padding: 0 0 0 2; }
        &.-error Collapsible CollapsibleTitle { color: $text-error; }
    }
    """

    def __init__(
        self,
        content: str,
        *,
        is_error: bool = False,
        kind: str = "",
        agent_id: str = "main",
        corr_id: str = "",
        image: bytes | None = None,
        truncated: bool = False,
        result_path: Path | None = None,
    ) -> None:
        super().__init__(agent_id=agent_id, corr_id=corr_id)
        self.content = content
        self.image = image
        self.truncated = truncated
        self.result_path = result_path
        self.kind = kind or ("Tool error" if is_error else "Tool output")
        self.is_error = is_error
        self.set_class(is_error, "-error")

    def _title(self, width: int = 0) -> str:
        """The kind and the output's first line, cut between words to fit ``width`` cells (0: 60 characters)."""
        first = self.content.strip().splitlines()[:_PREVIEW_LINES]
        room = (
            max(width - len(self.agent_id) - len(self.kind) - 10, 20) if width else 60
        )  # "▶ [id] kind: " and margins
        preview = one_line_summary(first[0], room) if first else "(empty)"
        return self.label(f"{self.kind}: {preview}")

    def on_resize(self) -> None:
        self.query_one(Collapsible).title = self._title(self.size.width)

    def compose(self) -> ComposeResult:
        with LogFold(title=self._title(), collapsed=True):
            yield Static(Content(visible(self.content)), markup=False)
        if self.truncated:  # under the title, seen while collapsed
            yield Static(inline_limit_note(self.result_path), classes="output-note")

    async def on_mount(self) -> None:
        if self.image is not None:  # what the model was shown; decoding and scaling runs off the event loop
            strips = await asyncio.to_thread(load_cells, self.image)
            if strips:
                await self.mount(ImagePreview(strips))
