"""One turn: model request → the reply policy's decision → actions → … until the reply is the answer.

Built from explicit parts (``Turn(ports, recorder, gate, context, policy, …)``); it reads top to
bottom in ``run``: after each step the policy says whether the turn goes on, switches protocol or
stops for want of progress (``policy/progress.py``). Failures end the turn with an ``AgentError`` and a valid history: a failed
model request is rolled back, unfinished calls are answered, a cancelled turn keeps what the
model had streamed (what of it the model is sent: ``agent/cancels.py``). What an exception is for the user
(its kind, its message) is read in one table, ``failures.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart

from freeact_tui.actions.dispatch import Dispatcher
from freeact_tui.actions.ports import TurnPorts
from freeact_tui.agent import history as hist
from freeact_tui.agent.approvals import ApprovalGate
from freeact_tui.agent.cancels import close_for
from freeact_tui.agent.context.keeper import ContextKeeper
from freeact_tui.agent.offered_tools import OfferedTools
from freeact_tui.agent.policy.progress import StopTurn, SwitchProtocol
from freeact_tui.agent.policy.reply import (
    CutReply,
    FinalAnswer,
    NotAnAnswer,
    NudgeModel,
    ReplyDecision,
    ReplyPolicy,
    RunBlocks,
    RunCalls,
)
from freeact_tui.agent.policy.text_protocol import switch_request
from freeact_tui.agent.recorder import Recorder
from freeact_tui.agent.turn.actions import ActionRunner
from freeact_tui.agent.turn.budget import RequestBudget
from freeact_tui.agent.turn.failures import failure_of
from freeact_tui.agent.turn.model_step import ModelStep
from freeact_tui.agent.turn.state import TurnState
from freeact_tui.agent.usage import usage_record
from freeact_tui.events import (
    AgentError,
    Cancelled,
    ErrorKind,
    Nudge,
    OutputClaim,
    Phase,
    ProtocolSwitch,
    UsageUpdate,
)
from freeact_tui.store.event_record import error_record
from freeact_tui.store.prompt_record import USAGE_KEY


class Turn:
    """One running turn of an agent.

    Args:
        ports: events, approval, the kernel, big results (shared by every part of the turn).
        recorder: the history and the session file.
        gate: the approval gate (its records go with each call's return).
        context: the context keeper (compaction before a request, gauge after).
        policy: decides what each reply leads to.
        model: makes one model request.
        dispatcher: runs one action.
        tools: what the requests offer (for calls written as text).
        state: the turn's state (phases, the calls running); the agent reads its phase.
        opening: records the prompt (raises ``TurnError`` when the turn cannot start).
        budget: the model requests of this turn, its subagents' included (``budget.py``); ``explicit``:
            its total is the caller's ``max_turns``.
    """

    def __init__(
        self,
        ports: TurnPorts,
        recorder: Recorder,
        gate: ApprovalGate,
        context: ContextKeeper,
        policy: ReplyPolicy,
        *,
        model: ModelStep,
        dispatcher: Dispatcher,
        tools: OfferedTools,
        state: TurnState,
        opening: Callable[[], Awaitable[None]],
        budget: RequestBudget,
        explicit: bool,
    ) -> None:
        self.ports = ports
        self.recorder = recorder
        self.policy = policy
        self.model = model
        self.tools = tools
        self.state = state
        self.actions = ActionRunner(ports, dispatcher, gate, policy, recorder, state)
        self.opening = opening
        self.budget = budget
        self.explicit = explicit
        self.steering: list[str] = []
        self.cancel_requested = False
        self.cancel_phase = Phase.IDLE
        self.started = False
        """``run`` has begun (a task cancelled before its first step never runs it)."""

    def cancel(self, task: asyncio.Task[None]) -> None:
        self.cancel_requested = True
        self.cancel_phase = self.state.phase  # unwinding clears the calls' phases
        task.cancel()

    async def run(self) -> None:
        """The turn, to its end; never raises (but a cancellation not asked for by ``cancel``)."""
        self.started = True
        start = len(self.recorder.history)
        generation = self.recorder.generation
        try:
            await self.opening()
            self.policy.begin_turn(self._requests_left())
            while True:
                if self.budget.left <= 0:  # the outer limit: a fault loop ends on the progress bound first
                    self._stop(self._budget_message(), kind="limit")
                    break
                self.budget.spend()
                self.state.next_step()
                reply = await self.model(self.state)
                self.state.received = True  # a cancel from here on is after this reply (``cancels.py``)
                same = self.recorder.generation == generation  # else a compaction rewrote the turn
                turn = self.recorder.history[start:] if same else None
                tools = self.tools.parameter_names() if self.policy.reads_written_calls else {}
                decision = self.policy.decide(reply, self.recorder.history, turn, tools)
                step = len(self.recorder.history)
                self.recorder.record(decision.response)
                if await self._act(decision):
                    break
                match self.policy.after_step(self.recorder.history[step:]):
                    case StopTurn(message=message):
                        self._stop(message, kind="stalled")
                        break
                    case SwitchProtocol(
                        reason=reason
                    ):  # auto: the model cannot call tools; it acts in code blocks now
                        self._announce_switch(reason)
                        self.recorder.record(switch_request(reason))
                        continue
                self._take_steering(self._requests_left())
        except asyncio.CancelledError:
            if not self.cancel_requested:
                raise
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            self._finish_cancelled()
        except (
            Exception
        ) as exc:  # never let a failure kill the UI: report it by its kind, keep the history valid
            failure = failure_of(exc)
            kept = hist.incomplete_response(failure.partial) if failure.partial is not None else None
            withdrawn: list[ModelMessage] = []
            spent = self.state.unanswered  # what the failed request cost: kept with it (a resume counts it)
            if kept is not None:  # the user saw part of a reply: keep it, marked incomplete
                if spent is not None:
                    kept = replace(kept, metadata={**(kept.metadata or {}), **usage_record(spent)})
                    spent = None
                self.recorder.record(kept)
            elif failure.request_failed:
                stored = list(self.recorder.stored)
                self.recorder.rollback(start)
                withdrawn = stored[
                    len(self.recorder.stored) :
                ]  # a compaction undone with it too: it was shown
            self._stop(failure.message, kind=failure.kind, withdrawn=withdrawn, spent=spent)
        finally:
            self.state.in_model = False
            self.state.phases.clear()
            await self.recorder.sync()

    async def _act(self, decision: ReplyDecision) -> bool:
        """Do what the policy decided for one reply; whether the turn ends with it (the answer, or an
        action rejected or a kernel died: the user decides how to go on)."""
        if not isinstance(decision, RunCalls) and decision.claims_output:
            self.ports.emit(OutputClaim(_CLAIM_NOTE, **self.ports.ids("")))
        match decision:
            case FinalAnswer():
                return True
            case CutReply(
                request=request
            ):  # the reply is incomplete: nothing of it runs, the turn ends "cut"
                if request is not None:
                    self.recorder.record(request)
                return True
            case NotAnAnswer(message=message):  # the app's own words: never the answer
                self._stop(message, kind="stalled")
                return True
            case NudgeModel(reason=why, told=told, request=request):
                self.ports.emit(Nudge(why.log, told, **self.ports.ids("")))
                self.recorder.record(request)
                return False
            case RunBlocks(blocks=blocks, switch=switch):
                if switch is not None:  # auto switched to text on this reply (the policy took the switch)
                    self._announce_switch(switch)
                return (await self.actions.blocks(blocks, switched=switch)).stop
            case RunCalls(calls=calls, in_order=in_order):
                return (await self.actions.calls(calls, in_order=in_order)).stop

    def _budget_message(self) -> str:
        if self.explicit:
            return f"Stopped after {self.budget.total} model requests (max_turns)."
        return (
            f"Stopped after {self.budget.total} model requests in this turn (the per-turn budget, "
            "max_model_requests). Say how to go on, or raise the budget."
        )

    def _stop(
        self,
        message: str,
        *,
        kind: ErrorKind,
        withdrawn: Sequence[ModelMessage] = (),
        spent: UsageUpdate | None = None,
    ) -> None:
        """End the turn on an error: shown, and kept in the session (with the messages the user saw that
        the model will not, and the usage of a request that left no reply) so that a resumed log shows it
        too and a resumed session counts what was sent."""
        self.ports.emit(AgentError(message, kind=kind, **self.ports.ids("")))
        try:
            record = usage_record(spent)[USAGE_KEY] if spent is not None else None
            self.recorder.record_event(error_record(kind, message, withdrawn, spent=record))
        except (
            Exception
        ):  # the session cannot be written (or a bug): the error was shown, the turn ends cleanly
            pass

    def _announce_switch(self, reason: str) -> None:
        self.ports.emit(ProtocolSwitch("text", f"Switched to text actions: {reason}.", **self.ports.ids("")))

    def _requests_left(self) -> int | None:
        """What the progress bound is lowered to: the requests left of ``max_model_requests``, so that a
        fault loop ends on the bound ("stalled"), never on that outer limit. A caller's ``max_turns`` is a
        budget asked for: reaching it is reported as such ("limit", headless exit 3)."""
        return None if self.explicit else self.budget.left

    def _take_steering(self, requests_left: int | None) -> None:
        """Messages the user sent into the running turn go to the model with its next request."""
        if self.steering:
            self.policy.begin_turn(requests_left)  # the user spoke: the bound counts from here
            texts, self.steering = self.steering, []
            self.recorder.record(ModelRequest(parts=[UserPromptPart(t) for t in texts]))

    def end_unstarted(self) -> None:
        """The turn was cancelled before ``run`` began: nothing was recorded, it ends cancelled."""
        self.ports.emit(Cancelled(phase=Phase.MODEL, **self.ports.ids("")))

    def _finish_cancelled(self) -> None:
        phase = self.cancel_phase
        close = close_for(phase, self.recorder.history, self.state.response)  # what is sent: ``cancels.py``
        spent = self.state.unanswered  # the requests sent for it (failed tries too), counted live: kept
        if close is not None and spent is not None:  # with the close, so that a resume counts them alike
            close = replace(close, metadata={**(close.metadata or {}), **usage_record(spent)})
        if close is not None:
            self.recorder.record(close)
        self.ports.emit(Cancelled(phase=phase if phase != Phase.IDLE else Phase.MODEL, **self.ports.ids("")))


_CLAIM_NOTE = "The reply shows output for code that had not run: it is the model's claim, not a result."

__all__ = ["Turn"]
