"""A model request that sends nothing is never silent: the model call says so (``ModelWaiting``).

One source of truth for every front end: after ``WAIT_AFTER`` seconds without a stream event the call
emits ``ModelWaiting`` with the seconds so far, about every ``WAIT_EVERY`` seconds, and stops as soon as
the model sends something.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from freeact_tui.agent import model_call
from freeact_tui.agent.agent import Agent
from freeact_tui.events import ModelWaiting, Response, ResponseChunk
from freeact_tui.permissions.rules import PermissionRules


def slow_model(silent: float, then_silent: float = 0.0) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        await asyncio.sleep(silent)
        yield "first "
        await asyncio.sleep(then_silent)
        yield "second"

    return FunctionModel(stream_function=stream, model_name="slow")


@pytest.mark.parametrize(("silent", "then_silent"), [(0.9, 0.0), (0.0, 0.9), (0.1, 0.1)])
async def test_a_silent_request_says_it_is_waiting_until_the_model_speaks(
    silent: float, then_silent: float, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(model_call, "WAIT_AFTER", 0.3)
    monkeypatch.setattr(model_call, "WAIT_EVERY", 0.1)
    agent = Agent(
        slow_model(silent, then_silent),
        sessions_dir=tmp_path / "sessions",
        working_dir=tmp_path,
        permissions=PermissionRules(None, defaults=False),
        enable_subagents=False,
        eager_kernel=False,
        model_idle_timeout=30,
    )
    async with agent:
        events = [e async for e in agent.stream("go")]
    kinds = [type(e).__name__ for e in events]
    assert [e.content for e in events if isinstance(e, Response)] == ["first second"]
    waits = [(i, e) for i, e in enumerate(events) if isinstance(e, ModelWaiting)]
    first_chunk = next(i for i, e in enumerate(events) if isinstance(e, ResponseChunk))
    if max(silent, then_silent) < 0.3:
        assert not waits, kinds  # a quick model: nothing said
        return
    assert waits, kinds
    seconds = [e.seconds for _, e in waits]
    assert seconds == sorted(seconds) and seconds[0] >= 0.3  # a live count, from the last sign of life
    assert all(e.idle_timeout == 30 and e.agent_id == "main" for _, e in waits)
    if silent:  # before the first word
        assert all(i < first_chunk for i, _ in waits)
    else:  # between two words: after the first, before the second
        second_chunk = next(
            i for i, e in enumerate(events) if isinstance(e, ResponseChunk) and i > first_chunk
        )
        assert all(first_chunk < i < second_chunk for i, _ in waits)
