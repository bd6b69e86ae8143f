"""A lone UTF-16 surrogate from the model (its text, a tool-call id or name, arguments) or from a tool's
output stays in the history but is never sent: what goes to the model is always encodable, so a session
that once received one keeps working, live and resumed (second ACP attack F1: every later prompt failed
with "Internal error: UnicodeEncodeError")."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from freeact_tui.agent.agent import Agent
from freeact_tui.agent.cancels import as_sent
from freeact_tui.agent.context.window import PreparedHistory
from freeact_tui.events import Response
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.text.encodable import encodable

SURROGATES = st.integers(0xD800, 0xDFFF).map(chr)
TEXT = st.lists(st.one_of(SURROGATES, st.text(max_size=5)), max_size=6).map("".join)


def strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [s for v in value for s in strings(v)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*strings(k), *strings(v))]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [s for f in dataclasses.fields(value) for s in strings(getattr(value, f.name))]
    return []


def sendable(messages: list[ModelMessage]) -> bool:
    try:
        for text in strings(messages):
            text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@st.composite
def histories(draw: st.DrawFn) -> list[ModelMessage]:
    out: list[ModelMessage] = []
    for i in range(draw(st.integers(1, 4))):
        call_id = draw(TEXT) or f"c{i}"
        out += [
            ModelRequest(parts=[UserPromptPart(draw(TEXT) or "go")]),
            ModelResponse(
                parts=[
                    ThinkingPart(draw(TEXT)),
                    TextPart(draw(TEXT)),
                    ToolCallPart(draw(TEXT) or "tool", {"code": draw(TEXT), draw(TEXT): 1}, call_id),
                ]
            ),
            ModelRequest(parts=[ToolReturnPart(draw(TEXT) or "tool", draw(TEXT), call_id)]),
            ModelResponse(parts=[TextPart(draw(TEXT) or "ok")]),
        ]
    return out


@settings(max_examples=150, deadline=None)
@given(histories())
def test_what_is_sent_is_always_encodable_and_the_history_keeps_what_came(history: list[ModelMessage]) -> None:
    before = [dataclasses.replace(m) for m in history]
    assert sendable(list(PreparedHistory().update(history)))
    assert sendable(as_sent(history))
    assert [strings(m) for m in history] == [strings(m) for m in before]  # stored as it came
    clean = [m for m in history if sendable([m])]
    assert all(encodable(m) is m for m in clean)  # nothing copied that needs no change


def test_a_model_reply_with_a_lone_surrogate_leaves_the_session_working(tmp_path: Path) -> None:
    seen: list[list[ModelMessage]] = []

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        seen.append(list(messages))
        yield "hi \udfff there" if len(seen) == 1 else "fine"

    async def main() -> list[str]:
        agent = Agent(
            FunctionModel(stream_function=stream, model_name="m"),
            sessions_dir=tmp_path / "s",
            working_dir=tmp_path,
            permissions=PermissionRules(None, defaults=False),
            enable_subagents=False,
            eager_kernel=False,
        )
        async with agent:
            answers = [e.content async for e in agent.stream("one") if isinstance(e, Response)]
            answers += [e.content async for e in agent.stream("two") if isinstance(e, Response)]
        return answers

    answers = asyncio.run(main())
    assert answers[-1] == "fine" and len(seen) == 2
    assert sendable(seen[1]) and any("\ufffd" in s for s in strings(seen[1]))
