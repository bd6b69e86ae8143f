"""Running what a reply asked for: its tool calls side by side, or its code blocks one after the other."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_ai.messages import ToolCallPart

from freeact_tui.actions.code import ActionOutcome
from freeact_tui.actions.dispatch import Dispatcher
from freeact_tui.actions.ports import TurnPorts
from freeact_tui.agent import history as hist
from freeact_tui.agent.approvals import ApprovalGate
from freeact_tui.agent.policy.reply import ReplyPolicy
from freeact_tui.agent.policy.text_protocol import BlockRun, TextAction, results_request
from freeact_tui.agent.recorder import Recorder
from freeact_tui.agent.turn.state import TurnState
from freeact_tui.events import ToolOutput
from freeact_tui.store.step_record import StepRecord
from freeact_tui.toolcalls import CODE_TOOL

MAX_ACTIONS_PER_REPLY = 16
"""The actions one reply may make (tool calls, or code blocks in the text protocol). The rest are not
run; the model is told to make them in its next reply. A reply of 10,000 calls otherwise ran for
minutes with nothing shown; the model request is closed at the first call past it (``model_call.py``),
as reading thousands of calls costs quadratic time in the model library."""


def over_the_cap(made: int) -> str:
    """What the model is told for each action past ``MAX_ACTIONS_PER_REPLY``."""
    return (
        f"Not run: one reply may make at most {MAX_ACTIONS_PER_REPLY} calls, and this one made more "
        f"(at least {made}: a reply is not read past the first call over the limit). "
        "Make the others in your next reply, if they are still needed."
    )


@dataclass(frozen=True)
class StepResult:
    """How a step of actions ended: the turn must stop (rejected, kernel died: the user decides)."""

    stop: bool


class ActionRunner:
    """Runs one step's actions through the dispatcher and records their results."""

    def __init__(
        self,
        ports: TurnPorts,
        dispatcher: Dispatcher,
        gate: ApprovalGate,
        policy: ReplyPolicy,
        recorder: Recorder,
        state: TurnState,
    ) -> None:
        self._ports = ports
        self._dispatcher = dispatcher
        self._gate = gate
        self._policy = policy
        self._recorder = recorder
        self._state = state

    async def calls(self, calls: list[ToolCallPart], *, in_order: bool = False) -> StepResult:
        """Run the calls of one response concurrently (``in_order``: one after the other) and record
        their returns; a cancelled call's return says it was interrupted."""
        self._state.calls = calls
        runs, past = calls[:MAX_ACTIONS_PER_REPLY], calls[MAX_ACTIONS_PER_REPLY:]
        try:
            if in_order:
                outcomes = [await self._call(c) for c in runs]
            else:
                outcomes = await _all([self._call(c) for c in runs])
            outcomes += [self._not_run(c, over_the_cap(len(calls))) for c in past]
        except BaseException:  # a cancel or a failure: the model still gets a return for every call
            self._record_returns(calls)
            raise
        self._record_returns(calls)  # every call finished
        return StepResult(any(o.rejected or o.kernel_died for o in outcomes))

    def _record_returns(self, calls: list[ToolCallPart]) -> None:
        """Record a return for each call: its result, or (not finished) what it printed, then interrupted."""
        state, printed = self._state, self._dispatcher.printed
        self._recorder.record(hist.interrupted_returns(calls, state.done, state.meta, printed))
        printed.clear()
        state.calls = []

    def _not_run(self, call: ToolCallPart, why: str) -> ActionOutcome:
        self._ports.emit(ToolOutput(why, is_error=True, **self._ports.ids(call.tool_call_id)))
        outcome = ActionOutcome(why, is_error=True, malformed=True)
        self._state.done[call.tool_call_id] = outcome.tool_content()
        self._state.meta[call.tool_call_id] = outcome.record()
        return outcome

    async def _call(self, call: ToolCallPart) -> ActionOutcome:
        guarded = self._policy.guard(call, self._recorder.history)
        if guarded is not None:
            self._ports.emit(ToolOutput(guarded.message, is_error=True, **self._ports.ids(call.tool_call_id)))
            outcome = ActionOutcome(guarded.message, is_error=True, shown=StepRecord(guarded=guarded.error))
        else:
            outcome = await self._dispatcher.run(call)
        self._state.done[call.tool_call_id] = outcome.tool_content()
        approvals = self._gate.take_records(call.tool_call_id)
        self._state.meta[call.tool_call_id] = outcome.record().with_approvals(approvals)
        return outcome

    async def blocks(self, blocks: Sequence[TextAction], *, switched: str | None = None) -> StepResult:
        """Run the blocks in order, each approved like a code tool call; record the results message.

        Stops at the first block that is rejected, fails or kills the kernel (the later ones did not
        run and the model is told so). A cancellation records what finished, the running block as
        interrupted, and propagates.
        """
        done: list[BlockRun] = []
        try:
            for block in blocks[:MAX_ACTIONS_PER_REPLY]:
                item = BlockRun(block, f"text_{uuid.uuid4().hex[:16]}")
                done.append(item)
                call = ToolCallPart(CODE_TOOL, {"code": block.code}, tool_call_id=item.corr_id)
                item.outcome = await self._dispatcher.run(call)
                item.approvals = self._gate.take_records(item.corr_id)
                if item.outcome.rejected or item.outcome.kernel_died or item.outcome.is_error:
                    break
        finally:
            if done:
                self._recorder.record(results_request(done, len(blocks) - len(done), switched=switched))
        last = done[-1].outcome if done else None
        return StepResult(last is not None and (last.rejected or last.kernel_died))


async def _all(runs: list[Coroutine[Any, Any, ActionOutcome]]) -> list[ActionOutcome]:
    """Await every run; when one is cancelled, cancel the others and wait for each (and its subagent) to wind down."""
    tasks = [asyncio.create_task(run) for run in runs]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


__all__ = ["ActionRunner", "StepResult"]
