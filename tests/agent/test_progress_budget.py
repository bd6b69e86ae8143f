"""The progress bound and the request budget: a fault loop ends on the bound, whatever the budget.

The bound (``max_steps_without_progress``) is lowered, per turn, to the model requests left of
``max_model_requests`` (the outer limit), so a loop of faults ends as ``stalled``, never as ``limit``,
and its message says the bound was lowered. A caller's explicit ``max_turns`` (headless
``--max-turns``) is a budget asked for: a turn that reaches it first ends as ``limit`` (exit 3). A
turn that makes progress each step ends on the budget, as ``limit``. Settings that would end every
turn before it began (0, negative) are refused with a message naming them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.agent.agent import Agent
from freeact_tui.events import AgentError
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.permissions.rules import PermissionRules
from tests import helpers
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.helpers import cli, fake_args, of, run
from tests.scripted import CODE_TOOL, Call, Code, Script

executor = helpers.kernel

BROKEN = [Call(CODE_TOOL, '{"code": "pri')]


def broken_forever() -> Script:
    return Script([BROKEN] * 200)


def agent_on(s: Script, tmp_path: Path, **kw: object) -> Agent:
    return Agent(
        s.model(),
        sessions_dir=tmp_path / "sessions",
        working_dir=tmp_path,
        permissions=PermissionRules(None, defaults=False),
        enable_subagents=False,
        eager_kernel=False,
        action_protocol="tools",
        **kw,  # type: ignore[arg-type]
    )


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    budget=st.integers(1, 8),
    bound=st.integers(1, 8),
    per_call=st.booleans(),
)
async def test_a_fault_loop_ends_as_stalled_at_the_smaller_of_bound_and_budget(
    tmp_path_factory: pytest.TempPathFactory, budget: int, bound: int, per_call: bool
) -> None:
    tmp_path = tmp_path_factory.mktemp("budget")
    s = broken_forever()
    if per_call:  # the caller's max_turns for this turn; the setting stays large
        agent = agent_on(s, tmp_path, max_steps_without_progress=bound)
        kw: dict[str, object] = {"max_turns": budget}
    else:
        agent = agent_on(s, tmp_path, max_steps_without_progress=bound, max_model_requests=budget)
        kw = {}
    async with agent:
        events = await run(agent, "go", **kw)
    (error,) = of(events, AgentError)
    assert len(s.requests) == min(bound, budget)
    if per_call and budget < bound:  # the caller's own budget came first
        assert error.kind == "limit" and "max_turns" in error.message, (budget, bound, error)
        return
    assert error.kind == "stalled", (budget, bound, per_call, error)
    assert "max_steps_without_progress" in error.message
    if budget < bound:
        assert f"max_steps_without_progress = {bound}, lowered to {budget}" in error.message
    else:
        assert f"max_steps_without_progress = {bound}." in error.message


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_a_turn_that_makes_progress_ends_on_the_budget_as_limit(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    # a new step each time (the same code with another number is the same step, #40)
    s = Script([[Code(f"x_{i} = {i}\nprint(x_{i})", call_id=f"w{i}")] for i in range(10)])
    agent = Agent(
        s.model(),
        sessions_dir=tmp_path / "sessions",
        working_dir=tmp_path,
        executor=executor,
        permissions=PermissionRules(None, defaults=False),
        enable_subagents=False,
        max_model_requests=3,
        max_steps_without_progress=5,
    )
    async with agent:
        events = await run(agent, "go")
    assert [e.kind for e in of(events, AgentError)] == ["limit"]
    assert len(s.requests) == 3


@pytest.mark.parametrize(
    "setting", [{"max_model_requests": 0}, {"max_steps_without_progress": 0}, {"max_model_requests": -2}]
)
def test_settings_below_one_are_refused_by_name(setting: dict[str, int], tmp_path: Path) -> None:
    (name,) = setting
    with pytest.raises(ValueError, match=f"{name} must be a whole number of at least 1"):
        agent_on(broken_forever(), tmp_path, **setting)


async def test_max_turns_below_one_is_refused(tmp_path: Path) -> None:
    async with agent_on(broken_forever(), tmp_path) as agent:
        with pytest.raises(ValueError, match="max_turns must be a whole number of at least 1"):
            await run(agent, "go", max_turns=0)


@pytest.mark.kernel
def test_headless_max_turns_is_the_callers_budget_and_the_bound_ends_a_longer_one(
    fake_openai: FakeOpenAI, tmp_path: Path, isolated_home: Path
) -> None:
    fake_openai.default = Reply(tool_calls=[ToolCallReply(CODE_TOOL, '{"code": "pri')])
    for turns, requests, code, status in [("2", 2, 3, "max_turns"), ("8", 3, 4, "stalled")]:
        fake_openai.reset()
        done = cli(
            "run", *fake_args(fake_openai), "--action-protocol", "tools", "--max-turns", turns, "-o", "json", "go",
            cwd=tmp_path,
        )  # fmt: skip
        result = json.loads(done.stdout)
        assert (fake_openai.count, done.returncode, result["status"]) == (requests, code, status), result


@pytest.mark.parametrize("value", ["0", "-1"])
def test_a_config_bound_below_one_is_a_clear_line(value: str, tmp_path: Path, isolated_home: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"max_steps_without_progress = {value}\n")
    done = cli("run", "--config", str(config), "--model", "test", "go", cwd=tmp_path)
    assert done.returncode != 0
    assert "max_steps_without_progress" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert len([line for line in done.stderr.splitlines() if "max_steps_without_progress" in line]) == 1
