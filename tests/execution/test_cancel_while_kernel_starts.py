"""A cancel right after an approval, while the kernel is still starting, leaves a consistent history:
every tool call has its return, so the next request is valid and answered (the ACP work found the
old turn loop recorded none in that case)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart, UserPromptPart

from freeact_tui import Agent, ApprovalRequest, Cancelled
from tests.scripted import Code, script

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(120)]


async def test_cancel_while_the_kernel_starts_closes_the_call(tmp_path: Path) -> None:
    s = script([Code("print('never')")], ["six times seven is 42"])
    agent = Agent(
        s.model(),
        sessions_dir=tmp_path / "sessions",
        working_dir=tmp_path,
        eager_kernel=False,  # the kernel starts when the approved action needs it
        enable_subagents=False,
        checkpoints=False,
    )
    async with agent:
        events = []
        async for event in agent.stream("print never"):
            events.append(event)
            if isinstance(event, ApprovalRequest) and not event.decided:
                event.approve(True)
                await asyncio.sleep(0.1)  # the kernel is starting now
                agent.cancel()
        assert any(isinstance(e, Cancelled) for e in events)
        calls = {
            p.tool_call_id
            for m in agent.history
            if isinstance(m, ModelResponse)
            for p in m.parts
            if isinstance(p, ToolCallPart)
        }
        returns = {
            p.tool_call_id
            for m in agent.history
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, ToolReturnPart)
        }
        assert calls and calls <= returns, agent.history[-2:]
        answer = [e async for e in agent.stream("what is 6 times 7?")]
    assert any("42" in str(getattr(e, "content", "")) for e in answer)
    last_request = s.requests[-1]
    assert isinstance(last_request[-1], ModelRequest)
    assert any(
        isinstance(p, UserPromptPart) and "6 times 7" in str(p.content) for p in last_request[-1].parts
    )
