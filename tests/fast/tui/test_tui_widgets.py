"""Conversation widgets on their own: ANSI safety, subagent nesting, the DOM budget, image links."""

from __future__ import annotations

import asyncio
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from textual.app import App, ComposeResult

from freeact_tui.events import (
    ApprovalRequest,
    CodeExecutionOutput,
    CodeExecutionOutputChunk,
    Response,
    ResponseChunk,
    SubagentStatus,
)
from freeact_tui.toolcalls import CodeAction, SubagentTask
from freeact_tui.tui.widgets.blocks import (
    ActionBlock,
    AnsiLog,
    ExecutionOutputBlock,
    SubagentBlock,
    sanitize_ansi,
)
from freeact_tui.tui.widgets.conversation import ConversationLog


class LogApp(App[None]):
    def __init__(self, budget: int = 200, widget_budget: int = 800) -> None:
        super().__init__()
        self.budget = budget
        self.widget_budget = widget_budget

    def compose(self) -> ComposeResult:
        yield ConversationLog(budget=self.budget, widget_budget=self.widget_budget)


def test_sanitize_keeps_colours_and_drops_terminal_control() -> None:
    raw = "\x1b[31mred\x1b[0m \x1b[2J\x1b[H\x1b]0;evil title\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\x07\x08done\x1b[?1049h"
    clean = sanitize_ansi(raw)
    assert clean == "\x1b[31mred\x1b[0m linkdone"


async def test_ansi_log_renders_colour_and_rewrites_line_on_carriage_return() -> None:
    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield AnsiLog()

    app = One()
    async with app.run_test(size=(80, 10)) as pilot:
        log = app.query_one(AnsiLog)
        log.write("progress 10%\rprogress 100%\n\x1b[1;32mok\x1b[0m plain\x1b[2K")
        await pilot.pause()
        # the rewritten text stays in sight (a marked restart), never drawn over unseen (#39)
        assert log.plain_text == "progress 10%␍progress 100%\nok plain"
        strip = log.render_line(1)
        segments = [(seg.text, seg.style) for seg in strip if seg.text.strip()]
        ok_style = next(style for text, style in segments if text.startswith("ok"))
        assert ok_style is not None and ok_style.bold and ok_style.color is not None
        assert ok_style.color.name in ("green", "color(2)") or ok_style.color.number == 2


class _OneLog(App[None]):
    def compose(self) -> ComposeResult:
        yield AnsiLog()


async def test_output_never_hides_what_the_model_reads() -> None:
    """A file the model reads (say by a default-allowed ``cat``) cannot hide text from the user: a line
    rewritten by ``\\r``, concealed text (SGR 8) and a colour on the same background all show (#39)."""
    app = _OneLog()
    async with app.run_test(size=(100, 10)) as pilot:
        log = app.query_one(AnsiLog)
        log.write(
            "line one safe\rEVIL OVERWRITTEN\n\x1b[8mCONCEALED\x1b[0m visible\n\x1b[30;40mBLACK\x1b[0m\n"
        )
        await pilot.pause()
        assert "line one safe" in log.plain_text and "EVIL OVERWRITTEN" in log.plain_text
        for y in (1, 2):
            for seg in log.render_line(y):
                style = seg.style
                if style is None or not seg.text.strip():
                    continue
                assert not style.conceal
                assert (
                    style.bgcolor is None
                    or style.color is None
                    or (style.color.get_truecolor() != style.bgcolor.get_truecolor())
                )


@settings(max_examples=25, deadline=None)
@given(
    segments=st.lists(
        st.text(alphabet="abcxyz 0123456789%", min_size=1, max_size=8), min_size=2, max_size=12
    ),
    cuts=st.lists(st.integers(min_value=1, max_value=40), max_size=4),
)
def test_a_rewritten_line_keeps_its_first_and_last_text_and_counts_the_rest(
    segments: list[str], cuts: list[int]
) -> None:
    asyncio.run(_check_rewrites(segments, cuts))


async def _check_rewrites(segments: list[str], cuts: list[int]) -> None:
    data = "\r".join(segments) + "\n"
    chunks, start = [], 0
    for cut in sorted(set(cuts)):
        if start < cut < len(data):
            chunks.append(data[start:cut])
            start = cut
    chunks.append(data[start:])
    app = _OneLog()
    async with app.run_test(size=(300, 5)) as pilot:
        log = app.query_one(AnsiLog)
        for chunk in chunks:  # streamed in pieces, as a kernel sends it
            log.write(chunk)
        await pilot.pause()
        shown = log.plain_text
        kept = [seg for seg in segments if seg.strip()]
        if kept:
            assert kept[-1] in shown
        if len(segments) <= AnsiLog.REWRITES_SHOWN + 1:
            assert all(seg in shown for seg in kept), (segments, shown)
        else:
            assert "more rewrites" in shown


async def test_subagent_events_nest_under_their_task_block() -> None:
    app = LogApp()
    async with app.run_test(size=(100, 40)) as pilot:
        log = app.query_one(ConversationLog)
        task = ApprovalRequest(SubagentTask("count files"), corr_id="task-1")
        block = await log.add_action(task)
        assert isinstance(block, SubagentBlock)
        sub = {"agent_id": "sub-ab12", "parent_corr_id": "task-1"}
        await log.add_action(ApprovalRequest(CodeAction("print(3)"), corr_id="s1", **sub))  # type: ignore[arg-type]
        await log.output_chunk(CodeExecutionOutputChunk("3\n", corr_id="s1", **sub))  # type: ignore[arg-type]
        await log.output_end(CodeExecutionOutput("3", corr_id="s1", **sub))  # type: ignore[arg-type]
        await log.response_chunk(ResponseChunk("There are 3.", **sub))  # type: ignore[arg-type]
        log.subagent_status(SubagentStatus("done", "count files", agent_id="sub-ab12", corr_id="task-1"))
        await log.finish_streams()
        await pilot.pause()
        nested = list(block.nested.children)
        assert [type(b).__name__ for b in nested] == ["ActionBlock", "ExecutionOutputBlock", "ResponseBlock"]
        assert all(b.agent_id == "sub-ab12" for b in nested)  # type: ignore[attr-defined]
        assert "[sub-ab12] Code action" in str(nested[0].border_title)
        assert block.status == "sub-ab12 done"
        top_level = [type(c).__name__ for c in log.children]
        assert top_level == ["SubagentBlock"]


async def test_dom_is_bounded_by_the_block_budget() -> None:
    app = LogApp(budget=10)
    async with app.run_test(size=(100, 40)) as pilot:
        log = app.query_one(ConversationLog)
        for index in range(25):
            await log.notice(f"note {index}")
        await pilot.pause()
        shown = [b.text for b in log.blocks]  # type: ignore[attr-defined]
        assert shown == [f"note {i}" for i in range(15, 25)]
        assert "15 earlier blocks" in str(log.query_one("#pruned").render())


async def test_dom_is_bounded_by_the_widget_budget_and_keeps_the_newest_blocks() -> None:
    answer = "Text with `code`:\n\n- one\n- two\n\n```python\nprint('x')\n```\n"
    app = LogApp(widget_budget=200)  # an answer is 3 widgets (its finished blocks are folded: #40)
    async with app.run_test(size=(100, 40)) as pilot:
        log = app.query_one(ConversationLog)
        async with log.replay():  # a resumed session's blocks: mounted at once
            for index in range(90):
                await log.response_end(Response(f"answer {index}\n\n{answer}"))
        for index in range(90, 100):
            await log.response_end(Response(f"answer {index}\n\n{answer}"))
        await pilot.pause()
        mounted = len(log.query("*"))
        texts = [b.text.split("\n", 1)[0] for b in log.blocks]  # type: ignore[attr-defined]
        assert mounted <= 200 * 6 // 5, mounted
        assert texts == [f"answer {i}" for i in range(100 - len(texts), 100)] and len(texts) >= 10
        assert f"{log.pruned} earlier blocks" in str(log.query_one("#pruned").render())
        assert log.pruned == 100 - len(texts)


async def test_images_become_file_links_and_errors_are_marked(tmp_path: Path) -> None:
    image = tmp_path / "plot one.png"
    image.write_bytes(b"\x89PNG")
    app = LogApp()
    async with app.run_test(size=(100, 40)) as pilot:
        log = app.query_one(ConversationLog)
        await log.output_end(
            CodeExecutionOutput("Traceback: boom", images=[image], is_error=True, corr_id="c9")
        )
        await pilot.pause()
        block = log.query_one(ExecutionOutputBlock)
        assert block.has_class("-error") and block.text == "Traceback: boom"
        link = block.query_one(".output-note").render()
        spans = [span.style for span in link.spans]  # type: ignore[attr-defined]
        assert any(getattr(style, "link", None) == image.as_uri() for style in spans)
        assert not log.query(ActionBlock)


async def test_parallel_calls_keep_their_output_next_to_their_action() -> None:
    app = LogApp()
    async with app.run_test(size=(100, 40)) as pilot:
        log = app.query_one(ConversationLog)
        await log.add_action(ApprovalRequest(CodeAction("print(1)"), corr_id="c1"))
        await log.add_action(ApprovalRequest(SubagentTask("research"), corr_id="c2"))
        await log.output_chunk(CodeExecutionOutputChunk("one\n", corr_id="c1"))
        await log.output_end(CodeExecutionOutput("one", corr_id="c1"))
        await pilot.pause()
        top = [
            (type(b).__name__, b.corr_id)
            for b in log.children
            if isinstance(b, ActionBlock | ExecutionOutputBlock | SubagentBlock)
        ]
        assert top == [("ActionBlock", "c1"), ("ExecutionOutputBlock", "c1"), ("SubagentBlock", "c2")]
