"""Every call the dispatcher runs ends with exactly one event a front end can show (its output, or the
refusal of its approval), whatever the model sent: valid or broken JSON arguments, a missing argument,
an unknown tool, a known one refused or allowed. A call that ended without a word was a step no front
end (the app's log, ``run``'s events, an ACP client) ever heard about."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ToolCallPart

from freeact_tui.actions.code import ActionOutcome
from freeact_tui.actions.dispatch import Dispatcher
from freeact_tui.actions.ports import Overflow, TurnPorts
from freeact_tui.events import AgentEvent, CodeExecutionOutput, Decision, Phase, ToolOutput
from freeact_tui.execution.base import Executor
from freeact_tui.toolcalls import CODE_TOOL, RESET_TOOL, SUBAGENT_TOOL, JsonToolCall, SubagentTask, ToolCall

JSON_TOOL = "notes_search"


class _Tools:
    def owns(self, tool_name: str) -> bool:
        return tool_name == JSON_TOOL

    async def call(self, tool_name: str, args: dict[str, Any]) -> tuple[str, bool]:
        return "found", bool(args.get("fail"))


def _allowed(call: ToolCall) -> bool:
    """Allowed: what runs without a kernel (a JSON tool, a subagent task); refused: code, a reset."""
    return isinstance(call, JsonToolCall | SubagentTask) and getattr(call, "tool_name", "") != RESET_TOOL


async def _run(parts: list[ToolCallPart]) -> tuple[list[AgentEvent], list[ActionOutcome]]:
    seen: list[AgentEvent] = []

    async def ask(call: ToolCall, corr: str) -> Decision:
        return Decision(_allowed(call))

    async def no_kernel() -> Executor:
        raise AssertionError("no call here reaches the kernel")

    async def subagent(prompt: str, max_turns: int, corr: str) -> ActionOutcome:
        return ActionOutcome("done", is_error="fail" in prompt)

    def set_phase(corr: str, phase: Phase | None) -> None:
        pass

    ports = TurnPorts(
        emit=seen.append,
        ids=lambda corr: {"agent_id": "main", "corr_id": corr},
        set_phase=set_phase,
        ask=ask,
        executor=no_kernel,
        overflow=lambda text: Overflow(text, False, None),
    )
    dispatcher = Dispatcher(ports, _Tools(), subagent, execution_timeout=None)
    return seen, [await dispatcher.run(part) for part in parts]


names = st.sampled_from([CODE_TOOL, RESET_TOOL, SUBAGENT_TOOL, JSON_TOOL, "no_such_tool"]) | st.text(
    max_size=12
)
values = st.none() | st.booleans() | st.integers() | st.text(max_size=10)
good_args = st.dictionaries(st.sampled_from(["code", "prompt", "fail", "max_turns", "x"]), values, max_size=3)
broken_args = st.sampled_from(['{"code": "pri', "{", '{"prompt": 1,}', "[1, 2]", "null", '"text"']) | st.text(
    max_size=8
)
arguments = good_args.map(json.dumps) | broken_args


@given(st.lists(st.tuples(names, arguments), min_size=1, max_size=6))
@settings(max_examples=200, deadline=None)
def test_every_call_ends_with_exactly_one_event(calls: list[tuple[str, str]]) -> None:
    parts = [ToolCallPart(name, args, tool_call_id=f"c{i}") for i, (name, args) in enumerate(calls)]
    seen, outcomes = asyncio.run(_run(parts))
    for part, outcome in zip(parts, outcomes, strict=True):
        ends = [
            e
            for e in seen
            if isinstance(e, ToolOutput | CodeExecutionOutput) and e.corr_id == part.tool_call_id
        ]
        refused = outcome.rejected or outcome.instructed
        assert len(ends) + refused == 1, (part, outcome, ends)
        if ends:
            assert ends[0].is_error == outcome.is_error


def test_broken_json_arguments_of_a_code_action_are_reported_as_a_failed_end() -> None:
    seen, outcomes = asyncio.run(_run([ToolCallPart(CODE_TOOL, '{"code": "pri', tool_call_id="bad")]))
    assert outcomes[0].malformed and outcomes[0].is_error
    assert [(type(e), e.corr_id, e.is_error) for e in seen if isinstance(e, ToolOutput)] == [
        (ToolOutput, "bad", True)
    ]
    assert "Invalid JSON arguments" in seen[0].content  # type: ignore[attr-defined]
