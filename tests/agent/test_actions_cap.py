"""#40: one reply makes at most ``MAX_ACTIONS_PER_REPLY`` actions; the rest are not run and the model is
told so. A tester's model sent 10,000 tool calls in one reply: a headless run showed nothing and recorded
no action for more than five minutes. The real agent and kernel; the model is scripted."""

from __future__ import annotations

from pathlib import Path

import pytest

from freeact_tui.agent.agent import Agent
from freeact_tui.agent.turn.actions import MAX_ACTIONS_PER_REPLY, over_the_cap
from freeact_tui.events import ApprovalRequest, ToolOutput
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.permissions.rules import PermissionRules
from tests.helpers import of, run
from tests.scripted import Code, script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]


@pytest.mark.parametrize("protocol", ["tools", "text"])
@pytest.mark.parametrize("made", [MAX_ACTIONS_PER_REPLY, MAX_ACTIONS_PER_REPLY + 1, 60])
async def test_a_reply_runs_at_most_the_cap_of_actions(
    executor: KernelExecutor, tmp_path: Path, protocol: str, made: int
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    code = [f"open({str(marks / str(i))!r}, 'w').write('x')" for i in range(made)]
    if protocol == "tools":
        reply = [Code(c, call_id=f"c{i}") for i, c in enumerate(code)]
    else:
        reply = ["".join(f"```python\n{c}\n```\n" for c in code)]
    s = script(reply, ["done"])
    agent = Agent(
        s.model(),
        sessions_dir=tmp_path / "sessions",
        working_dir=tmp_path,
        executor=executor,
        permissions=PermissionRules(None, defaults=False),
        action_protocol=protocol,
    )
    async with agent:
        events = await run(agent, "go")
    ran = min(made, MAX_ACTIONS_PER_REPLY)
    assert len(list(marks.iterdir())) == ran
    assert len(of(events, ApprovalRequest)) == ran  # nothing past the cap is even asked
    told = str(s.requests[1]) if len(s.requests) > 1 else ""
    if protocol == "tools":
        over = [e for e in of(events, ToolOutput) if e.is_error and "Not run" in e.content]
        assert len(over) == min(made, MAX_ACTIONS_PER_REPLY + 1) - ran  # not read past the first call over
        if made > ran:
            assert over_the_cap(min(made, MAX_ACTIONS_PER_REPLY + 1)) in told
    elif made > ran:
        assert f"The {made - ran} code block(s) after it did not run." in told


async def test_a_reply_of_ten_thousand_calls_is_read_only_to_the_first_call_over_the_cap(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    """Reading every part of such a reply cost quadratic time in the model library (2,000 calls: 59 s;
    10,000 never ended) before the cap applied: the request is closed at the first call past the cap."""
    made = 10_000
    s = script([Code(f"x_{i} = {i}", call_id=f"c{i}") for i in range(made)], ["done"])
    agent = Agent(
        s.model(),
        sessions_dir=tmp_path / "sessions",
        working_dir=tmp_path,
        executor=executor,
        permissions=PermissionRules(None, defaults=False),
        action_protocol="tools",
    )
    async with agent:
        events = await run(agent, "go")
    assert len(of(events, ApprovalRequest)) == MAX_ACTIONS_PER_REPLY
    assert len(s.requests) == 2
    assert over_the_cap(MAX_ACTIONS_PER_REPLY + 1) in str(s.requests[1])
