"""Turns that end by what they achieve (#30), end to end: a real kernel, a scripted model.

Steps without progress end a turn (tools and text, #40); a per-turn budget of model requests; a
request cancelled before any text is closed, so the next prompt is the one answered; output the
model made up is flagged (``OutputClaim``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from freeact_tui.agent.agent import Agent
from freeact_tui.events import AgentError, ApprovalRequest, Cancelled, OutputClaim, Response, ThoughtsChunk
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.store.prompt_record import CANCELLED_NOTE, CUT_KEY, USAGE_KEY
from tests.helpers import of, run
from tests.scripted import Code, Script, Think, Wait, script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]


def make_agent(s: Script, executor: KernelExecutor, tmp_path: Path, **kw: object) -> Agent:
    return Agent(
        s.model(),
        sessions_dir=tmp_path / "sessions",
        working_dir=tmp_path,
        executor=executor,
        permissions=PermissionRules(None, defaults=False),
        **kw,
    )


async def test_tools_a_b_a_b_a_ends_the_turn_for_want_of_progress(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    """#30 pandas: import fails, !pip installs elsewhere, import fails again … nine rounds until 400 s.
    #40: the same failure again and the same step again are no progress; the third in a row stops."""
    s = script(
        [Code("import no_such_pkg_30", call_id="c1")],
        [Code("print('installing')", call_id="c2")],
        [Code("import no_such_pkg_30 as p", call_id="c3")],
        [Code("print('installing')", call_id="c4")],
        [Code("import no_such_pkg_30", call_id="c5")],
        [Code("print('never')", call_id="c6")],
    )
    async with make_agent(s, executor, tmp_path) as agent:
        events = await run(agent, "Average price from prices.csv")
    errors = of(events, AgentError)
    assert [e.kind for e in errors] == ["stalled"]
    assert "No module named 'no_such_pkg_30'" in errors[0].message and "3 steps in a row" in errors[0].message
    assert len(s.requests) == 5 and len(of(events, ApprovalRequest)) == 5


async def test_text_the_same_error_again_and_again_ends_the_turn(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script(
        ["```python\n1 / 0\n```"],
        ["```python\nprint(1 / 0)\n```"],
        ["```python\nx = 1 / 0\n```"],
        ["```python\ny = 2 / 0\n```"],
        ["```python\nprint('never')\n```"],
    )
    async with make_agent(s, executor, tmp_path, action_protocol="text") as agent:
        events = await run(agent, "divide")
    errors = of(events, AgentError)
    assert [e.kind for e in errors] == ["stalled"] and "ZeroDivisionError" in errors[0].message
    assert len(s.requests) == 4


async def test_the_bound_is_configurable(executor: KernelExecutor, tmp_path: Path) -> None:
    s = script(*(["```python\n1 / 0\n```"] for _ in range(6)))
    async with make_agent(
        s, executor, tmp_path, action_protocol="text", max_steps_without_progress=1
    ) as agent:
        events = await run(agent, "divide")
    assert [e.kind for e in of(events, AgentError)] == ["stalled"] and len(s.requests) == 2


async def test_a_turn_has_a_budget_of_model_requests(executor: KernelExecutor, tmp_path: Path) -> None:
    # a new step each time (the same code with another number is the same step, #40)
    s = script(*([Code(f"x_{i} = {i}\nprint(x_{i})", call_id=f"c{i}")] for i in range(10)))
    async with make_agent(s, executor, tmp_path, max_model_requests=3) as agent:
        events = await run(agent, "count forever")
    errors = of(events, AgentError)
    assert len(s.requests) == 3 and [e.kind for e in errors] == ["limit"]
    assert "3 model requests in this turn" in errors[0].message and "max_model_requests" in errors[0].message


async def test_a_request_cancelled_while_thinking_is_closed(executor: KernelExecutor, tmp_path: Path) -> None:
    """#30: Esc while the model thought about 'print 1 to 30', then 'What is 6 times 7?' got the 1–30 loop."""
    gate = asyncio.Event()
    s = script([Think("Let me write a loop"), Wait(gate), "for i in range(1, 31): ..."], ["42"])
    async with make_agent(s, executor, tmp_path) as agent:
        async for event in agent.stream("print 1 to 30, each on its own line"):
            if isinstance(event, ThoughtsChunk):
                agent.cancel()
        closing = agent.history[-1]
        assert isinstance(closing, ModelResponse) and closing.parts[-1] == TextPart(CANCELLED_NOTE)
        events = await run(agent, "What is 6 times 7?")
    assert of(events, Response)[-1].content == "42"
    sent = s.requests[-1]
    prompts = [
        p.content
        for m in sent
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    ]
    assert prompts == [
        "What is 6 times 7?"
    ]  # #45: the cancelled request is left out of what the model is sent
    assert not any(isinstance(m, ModelResponse) for m in sent)
    kept = [
        p.content
        for m in agent.history
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    ]
    assert kept[0] == "print 1 to 30, each on its own line"  # ... and kept in the session


async def test_a_cancel_before_anything_streamed_is_closed_too(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    gate = asyncio.Event()
    s = script([Wait(gate), "late"], ["fine"])
    async with make_agent(s, executor, tmp_path) as agent:
        stream = agent.stream("first")
        task = asyncio.create_task(anext(stream))
        while not s.requests:  # noqa: ASYNC110 - the scripted model has no event to wait on
            await asyncio.sleep(0.01)
        agent.cancel()
        first = await task
        rest = [e async for e in stream]
        assert isinstance(first, Cancelled) or of(rest, Cancelled)
        last = agent.history[-1]
        assert isinstance(last, ModelResponse) and last.parts == [TextPart(CANCELLED_NOTE)]
        assert (last.metadata or {}).get(CUT_KEY) == "cancelled"  # a resumed log marks it cut
        # besides, the close may carry the usage of the requests it ends (counted the same after a resume)
        assert set(last.metadata or {}) <= {CUT_KEY, USAGE_KEY}


async def test_output_the_model_made_up_is_flagged(executor: KernelExecutor, tmp_path: Path) -> None:
    """#30 pandas: every reply showed 'Output: Average price: 5.93' as if it had run (the answer is 26.25)."""
    made_up = "```python\nprint(sum([1, 2]))\n```\nOutput:\n```\n3\n```"
    s = script([made_up])
    async with make_agent(s, executor, tmp_path) as agent:
        events = await run(agent, "sum 1 and 2")
    claims = of(events, OutputClaim)
    assert len(claims) == 1 and "claim" in claims[0].text
    s = script(["The sum is 3."])
    async with make_agent(s, executor, tmp_path) as agent:
        assert not of(await run(agent, "sum 1 and 2"), OutputClaim)
