"""Model text is never dropped by the markdown renderer: HTML-looking text is shown as written."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.widgets import Markdown

from freeact_tui.events import Response, ResponseChunk
from freeact_tui.tui.widgets.blocks import ResponseBlock
from freeact_tui.tui.widgets.conversation import ConversationLog

TOOLS_REPLY = '<tools>{"name": "ipybox_execute_ipython_cell", "arguments": {"code": "print(1)"}}</tools>'


class LogApp(App[None]):
    def compose(self) -> ComposeResult:
        yield ConversationLog()


def shown_text(markdown: Markdown) -> str:
    """The text the markdown view paints, line by line (each leaf widget rendered at its size)."""
    lines: list[str] = []
    for block in markdown.query("*"):
        if block.children:
            continue  # containers paint nothing of their own here; their leaves do
        size = block.size
        for strip in block.render_lines(Region(0, 0, size.width, size.height)):
            lines.append(strip.text.rstrip())
    return "\n".join(line for line in lines if line.strip())


def squashed(text: str) -> str:
    return "".join(text.split())


async def test_a_streamed_reply_of_html_like_text_is_shown_literally() -> None:
    app = LogApp()
    chunks = [
        "Let me run it:\n\n",
        TOOLS_REPLY[:30],
        TOOLS_REPLY[30:],
        "\n\nInline <b>bold?</b> and <tool_call>x</tool_call>, a &amp; b, 1 < 2 > 0.\n\n<div>\nblock\n</div>\n",
    ]
    async with app.run_test(size=(200, 40)) as pilot:
        log = app.query_one(ConversationLog)
        for chunk in chunks:
            await log.response_chunk(ResponseChunk(chunk))
        await log.response_end(Response("".join(chunks)))
        await pilot.pause()
        block = app.query_one(ResponseBlock)
        text = shown_text(block.markdown)
        for piece in (
            "Let me run it:",
            TOOLS_REPLY,
            "Inline <b>bold?</b> and <tool_call>x</tool_call>, a &amp; b, 1 < 2 > 0.",
            "<div>",
            "block",
            "</div>",
        ):
            assert squashed(piece) in squashed(text), (piece, text)


async def test_a_complete_reply_that_is_only_a_tag_block_is_not_empty() -> None:
    app = LogApp()
    async with app.run_test(size=(200, 20)) as pilot:
        log = app.query_one(ConversationLog)
        await log.response_end(Response(TOOLS_REPLY))
        await pilot.pause()
        block = app.query_one(ResponseBlock)
        assert block.markdown.region.height > 0
        assert squashed(TOOLS_REPLY) in squashed(shown_text(block.markdown))


async def test_markdown_still_renders_as_markdown() -> None:
    app = LogApp()
    async with app.run_test(size=(120, 20)) as pilot:
        log = app.query_one(ConversationLog)
        await log.response_end(Response("# Title\n\n**bold** and `code`\n\n- item"))
        await pilot.pause()
        text = shown_text(app.query_one(ResponseBlock).markdown)
        assert "**" not in text and "#" not in text and "`" not in text
        assert "Title" in text and "bold" in text and "item" in text
