"""What is sent to the model in a long session: old tool results and images trimmed, the session intact.

A real kernel runs the code action; the model is scripted and records what it was sent.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from freeact_tui.agent.agent import Agent
from freeact_tui.agent.context import PreparedHistory, breakdown
from freeact_tui.agent.context.compaction import choose_cut, is_cut_point
from freeact_tui.agent.model_stream import FAST_PATH, PreparedMessages
from freeact_tui.events import AgentError, ContextUpdate
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.permissions.rules import PermissionRules
from tests.scripted import Code, script
from tests.windowed import sent_text

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63f8cf"
    "c0f01f0005000201a5f5d2a40000000049454e44ae426082"
)


def read(path: str) -> str:
    return Path(path).read_text()


def tool_returns(messages: list[ModelMessage]) -> list[str]:
    return [
        str(p.content)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    ]


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_old_results_and_images_are_trimmed_in_requests_only(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script(
        [Code("print('A' * 3000 + 'MIDDLE' + 'B' * 3000)")],
        ["printed"],
        ["ok"],
        ["ok"],
        ["ok"],
        ["ok"],
    )
    agent = Agent(
        s.model(),
        sessions_dir=tmp_path / "sessions",
        working_dir=tmp_path,
        executor=executor,
        permissions=PermissionRules(None, skip_permissions=True),
        enable_subagents=False,
        trim_result_chars=500,
    )
    async with agent:
        async for _ in agent.stream(["Look at this", BinaryContent(PNG, media_type="image/png")]):
            pass
        for n in range(4):
            async for _ in agent.stream(f"next {n}"):
                pass
    recent = tool_returns(s.requests[1])[0]  # the result right after it ran: sent whole
    assert "MIDDLE" in recent and len(recent) > 6000
    old = tool_returns(s.requests[-1])[0]  # four turns later: trimmed to a head and tail
    assert "MIDDLE" not in old and old.startswith("AAAA") and old.rstrip().endswith("BBBB")
    assert len(old) < 1000 and "characters of this old result trimmed from the context" in old
    saved = re.search(r"the full text is in (\S+) …", old)
    assert saved and "MIDDLE" in read(saved.group(1))
    first_prompt = s.requests[-1][0].parts[-1]
    assert isinstance(first_prompt, UserPromptPart)
    assert "image (image/png" in str(first_prompt.content) and "removed from the context" in str(
        first_prompt.content
    )
    assert not any(isinstance(c, BinaryContent) for c in first_prompt.content)
    # The session keeps everything.
    stored = agent.session.load().messages if agent.session else []
    assert any("MIDDLE" in r for r in tool_returns(stored))
    assert any(isinstance(c, BinaryContent) for c in stored[0].parts[-1].content)  # type: ignore[union-attr]


def test_prepared_history_is_incremental_and_merges_adjacent_requests() -> None:
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("one")])]
    prepared = PreparedHistory(trim_chars=100, trim_age=2)
    out = prepared.update(history)
    history += [
        ModelResponse(parts=[TextPart("answer")]),
        ModelRequest(parts=[UserPromptPart("rejected turn")]),
        ModelRequest(parts=[UserPromptPart("next")]),
    ]
    again = prepared.update(history)
    assert again is out and len(again) == 3  # same list, brought up to date; the two requests merged
    merged = again[-1]
    assert isinstance(merged, ModelRequest) and [p.content for p in merged.parts] == ["rejected turn", "next"]  # type: ignore[union-attr]
    assert prepared.total.total == breakdown(again).total  # the running estimate equals a full count
    assert isinstance(again, PreparedMessages) and again.plain and again.instructions is None
    history.append(ModelResponse(parts=[TextPart("x")]))
    with pytest.warns(UserWarning, match="RetryPromptPart"):  # the legacy part older sessions hold
        retry = RetryPromptPart("fix it", tool_name="t")
    history.append(ModelRequest(parts=[retry], instructions="be brief"))
    again = prepared.update(history)
    assert not again.plain and again.instructions == "be brief"  # pydantic-ai must prepare this one itself
    history[:] = history[:2]
    again = prepared.update(history, generation=1)
    assert len(again) == 2 and again.plain  # a rewrite (rollback, compaction) starts over
    assert FAST_PATH  # pydantic-ai's internals the fast route uses are where it expects them


def test_cut_never_parts_a_call_from_its_return() -> None:
    def call(i: int) -> list[ModelMessage]:
        return [
            ModelResponse(parts=[ToolCallPart("ipybox_execute_ipython_cell", {"code": "x" * 400}, f"c{i}")]),
            ModelRequest(parts=[ToolReturnPart("ipybox_execute_ipython_cell", "y" * 400, f"c{i}")]),
        ]

    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("task")])]
    for i in range(10):
        history += call(i)
    history.append(ModelResponse(parts=[TextPart("done")]))
    history.append(ModelRequest(parts=[UserPromptPart("next task")]))
    for i in range(10, 13):
        history += call(i)
    for keep in (50, 300, 700, 2000):
        cut = choose_cut(history, keep)
        assert cut > 0 and is_cut_point(history, cut)
        kept = history[cut:]
        calls = {p.tool_call_id for m in kept for p in m.parts if isinstance(p, ToolCallPart)}
        returns = {p.tool_call_id for m in kept for p in m.parts if isinstance(p, ToolReturnPart)}
        assert returns <= calls  # no return without its call
    assert choose_cut(history, 2000) == 22  # prefers the start of the last user turn when it fits


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("window", [3_000, 300_000], ids=["small-window", "large-window"])
async def test_a_turn_too_large_for_the_window_has_its_own_results_cut(
    executor: KernelExecutor, tmp_path: Path, window: int
) -> None:
    """A result of the current turn larger than the window is cut (head and tail, full text in a file)
    before the next request; with room enough it is sent whole. The model refuses a request larger than
    the window (as providers do), so a turn that is not cut fails."""
    s = script([Code("print('A' * 7000 + 'MIDDLE' + 'B' * 7000)")], ["printed"])
    largest = 0

    async def windowed(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        nonlocal largest
        largest = max(largest, len(sent_text(messages)) // 4)
        if len(sent_text(messages)) // 4 > window:
            raise ModelHTTPError(400, "windowed", {"error": {"code": "context_length_exceeded"}})
        async for item in s._stream(messages, info):
            yield item

    agent = Agent(
        FunctionModel(stream_function=windowed, model_name="windowed"),
        sessions_dir=tmp_path / "sessions",
        working_dir=tmp_path,
        executor=executor,
        permissions=PermissionRules(None, skip_permissions=True),
        enable_subagents=False,
        system_prompt="You are a test agent.",
        context_window=window,
    )
    async with agent:
        events = [e async for e in agent.stream("print a lot")]
    assert not [e for e in events if isinstance(e, AgentError)]
    assert len(s.requests) == 2 and largest <= window
    sent = tool_returns(s.requests[1])[0]
    stored = agent.session.load().messages if agent.session else []
    assert any("MIDDLE" in r for r in tool_returns(stored))  # the session keeps the whole result
    if window > 100_000:
        assert "MIDDLE" in sent and len(sent) > 14_000  # room enough: sent whole
        return
    assert "MIDDLE" not in sent and sent.startswith("AAAA") and sent.rstrip().endswith("BBBB")
    assert "characters of this result trimmed from the context" in sent and len(sent) < 2_000
    saved = re.search(r"the full text is in (\S+) …", sent)
    assert saved and "MIDDLE" in read(saved.group(1))
    gauges = [e for e in events if isinstance(e, ContextUpdate)]
    assert gauges and all(g.fraction < 1 for g in gauges)  # the gauge never showed it overfull


def test_a_squeezed_result_is_not_cut_again_when_it_ages() -> None:
    saved: list[str] = []

    def where(part: ToolReturnPart) -> str:
        saved.append(str(part.content))
        return f"the full text is in file{len(saved)}"

    prepared = PreparedHistory(trim_chars=300, trim_age=2, where=where)
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("run it")]),
        ModelResponse(parts=[ToolCallPart("ipybox_execute_ipython_cell", {"code": "1"}, "c1")]),
        ModelRequest(parts=[ToolReturnPart("ipybox_execute_ipython_cell", "A" * 5000 + "B" * 5000, "c1")]),
    ]
    prepared.update(history)
    before = prepared.total.total
    assert prepared.squeeze(excess=1000, keep=1000) > 1000  # the recent result is cut (once: enough saved)
    assert prepared.total.total == breakdown(prepared.messages).total < before
    history += [ModelResponse(parts=[TextPart("done")]), ModelRequest(parts=[UserPromptPart("next")])]
    history += [ModelResponse(parts=[TextPart("ok")])]
    out = tool_returns(prepared.update(history))[0]  # now old enough to be trimmed by age: left as it is
    assert out.count("trimmed from the context") == 1 and "this result trimmed" in out and len(saved) == 1
    assert out.startswith("A" * 500) and out.rstrip().endswith("B" * 500)
