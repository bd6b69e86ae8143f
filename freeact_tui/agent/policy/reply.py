"""The reply policy: what one model reply leads to, decided in one place.

``ReplyPolicy.decide(reply, history, turn, tools)`` returns one of six decisions:

- ``RunCalls``: run these tool calls (in ``auto``, calls the model wrote as text are made real);
- ``RunBlocks``: run these code blocks (``text``; ``auto`` switching to text, or repairing a failed step);
- ``NudgeModel``: do not end the turn, tell the model this instead (``nudge.py``);
- ``FinalAnswer``: the reply ends the turn;
- ``CutReply``: the reply was cut short (its finish reason, read first: ``reply_stops.py``); nothing of it runs;
- ``NotAnAnswer``: the reply is never an answer (the app's own words) and no nudge is left: the turn stops.

One policy per protocol (``reply_policy(name)``): ``ToolsPolicy`` is the null policy (a reply's
tool calls run and anything else is the answer), ``TextPolicy`` runs a reply's code blocks, and
``AutoPolicy`` owns the switch from tool calls to text. The rules, structural ones first: did any action run in this turn and did the last one fail
(``outcomes.py``), does the reply repeat the code that just ran, does a number in the reply come
from an output or the user; phrasing rules ("here's how", "has been created") come last and
never decide alone what runs. ``guard(call, history)`` is the one check per call (a call that
just failed is not run again).

The policy owns the turn's state (``begin_turn``) and its protocol's: after each step that did not
end the turn, ``after_step(step)`` returns what the loop does next as a decision — ``StopTurn`` after
``stall_limit`` steps in a row without progress (``progress.py``, every protocol), ``SwitchProtocol``
when ``auto`` sees only broken tool calls (``RunBlocks.switch`` when it switches on a reply's
block), ``None`` to go on. The loop announces these; it never sets the protocol. ``tests/fast/agent/test_reply_policy.py`` is the
table of cases.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart

from freeact_tui.agent.policy.nudge import OWN_WORDS_RULES, NoAnswer, NudgeReason, answers_nudge, nudge_for
from freeact_tui.agent.policy.outcomes import (
    RESULTS_KEY,
    acted,
    had_working_tool_call,
    last_action_failed,
)
from freeact_tui.agent.policy.progress import (
    DEFAULT_FAILING_LIMIT,
    DEFAULT_SHAPE_LIMIT,
    DEFAULT_STALL_LIMIT,
    ProgressMeter,
    StepVerdict,
    SwitchProtocol,
)
from freeact_tui.agent.policy.repeat_guard import GuardedCall, guard_call
from freeact_tui.agent.policy.text_protocol import (
    ProtocolName,
    TextAction,
    fence_action,
    fences,
    is_text_session,
    reply_text,
    text_actions,
)
from freeact_tui.agent.policy.written_calls import ToolParameters, with_written_calls
from freeact_tui.agent.reply_stops import ReplyStop, reply_stop
from freeact_tui.store.step_record import StepRecord, stored_text_actions
from freeact_tui.toolcalls import CODE_TOOL

SWITCH_REASON = "the model wrote its code in a code block instead of calling the tool"
AUTO_SWITCH_MALFORMED = 2
"""``auto`` on tool calls switches to text after this many steps in a row of only broken calls."""


@dataclass(frozen=True)
class RunCalls:
    """Run these tool calls (``in_order``: one after the other, as calls written as text are meant)."""

    response: ModelResponse
    """The reply as it is recorded (calls written as text made real)."""
    calls: list[ToolCallPart]
    in_order: bool = False


@dataclass(frozen=True)
class RunBlocks:
    """Run these code blocks of the reply, in order; ``switch``: ``auto`` switches to text first (why)."""

    response: ModelResponse
    blocks: list[TextAction]
    switch: str | None = None
    claims_output: bool = False


@dataclass(frozen=True)
class NudgeModel:
    """Do not end the turn: record ``request`` (it tells the model ``told``) and ask the model again."""

    response: ModelResponse
    reason: NudgeReason
    told: str
    request: ModelRequest
    claims_output: bool = False


@dataclass(frozen=True)
class FinalAnswer:
    """The reply ends the turn."""

    response: ModelResponse
    claims_output: bool = False
    """It shows an output block for code that did not run: the model's claim, not a result."""


@dataclass(frozen=True)
class CutReply:
    """The reply was cut short (the token limit, the provider's filter): nothing in it runs, whatever
    its parts, and it is no protocol fault; the turn ends as the stop says (``reply_stops.py``)."""

    response: ModelResponse
    stop: ReplyStop
    request: ModelRequest | None
    """A return for each of its calls, telling the model why it did not run (``None``: it made none)."""
    claims_output: bool = False


def cut_returns(response: ModelResponse, stop: ReplyStop) -> ModelRequest | None:
    """What the model is told for each call of a reply cut short: not run, and to make smaller steps."""
    calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
    if not calls:
        return None
    told = (
        f"Not run: {stop.told} Make smaller steps: a shorter reply, one action at a time, "
        "and write big contents to a file in several steps."
    )
    return ModelRequest(
        parts=[
            ToolReturnPart(
                c.tool_name,
                told,
                tool_call_id=c.tool_call_id,
                metadata=StepRecord(outcome="interrupted").to_meta(),
            )
            for c in calls
        ]
    )


def cut_reply(reply: ModelResponse) -> CutReply | None:
    """The decision for a reply cut short, read first whatever the protocol: its parts are incomplete."""
    stop = reply_stop(reply.finish_reason)
    return CutReply(reply, stop, cut_returns(reply, stop)) if stop is not None else None


@dataclass(frozen=True)
class NotAnAnswer:
    """The reply is no answer (the app's own words) and no nudge is left for it: the turn stops."""

    response: ModelResponse
    reason: NudgeReason
    message: str
    """What the user is told (the turn ends ``stalled``)."""
    claims_output: bool = False


ReplyDecision = RunCalls | RunBlocks | NudgeModel | FinalAnswer | NotAnAnswer | CutReply


_OUTPUT_LABEL = re.compile(
    r"(?:^|\n)[ \t*_#>]*(?:output|result|results|ausgabe|ergebnis)[ \t*_]*:?[ \t*_]*\n?$", re.I
)


def claims_output(text: str, *, ran: bool = False) -> bool:
    """The reply shows an output block for code that had not run: output the model made up.

    Structural first: a fence that is not an action (plain text, a value) after a code block of the
    same reply (nothing ran between the two). A labelled one (``Output:``, ``Result:``) without code
    before it counts only when nothing ran in the turn (``ran``): else it may quote a real output.
    """
    seen_code = False
    at = 0
    for fence in fences(text):
        start = text.find(fence.source, at)
        at = max(start, at)
        if fence_action(fence) is not None:
            seen_code = True
            continue
        if seen_code or (not ran and _OUTPUT_LABEL.search(_before_fence(text, start))):
            return True
    return False


def _before_fence(text: str, source_at: int) -> str:
    """The text before the fence that opens the block at ``source_at`` (the fence line dropped)."""
    if source_at < 0:
        return ""
    opening = text.rfind("\n", 0, max(0, source_at - 1))
    return text[: max(0, opening)].rstrip(" \t")


def repeats_last_actions(actions: Sequence[TextAction], turn: Sequence[ModelMessage]) -> bool:
    """Whether ``actions`` are exactly the code of the turn's previous step (its blocks or code tool calls).

    Such a reply repeats itself (small models restate the code they ran in their answer): it is the
    answer, and its blocks do not run again — unless that code failed (then it is a step again). Code that ran earlier, with other steps since, may
    run again (the same import after a ``pip install``). ``turn[-1]`` is the reply itself.
    """
    codes = [a.code for a in actions]
    for message in reversed(turn[:-1]):
        if (
            isinstance(message, ModelRequest)
            and isinstance(message.metadata, dict)
            and RESULTS_KEY in message.metadata
        ):
            return codes == [block.code for block in stored_text_actions(message.metadata)]
        if isinstance(message, ModelResponse):
            calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
            if calls:
                return codes == [_code_arg(c) for c in calls]
    return False


def _code_arg(call: ToolCallPart) -> object:
    if call.tool_name != CODE_TOOL:
        return None
    try:
        return call.args_as_dict().get("code")
    except ValueError:
        return None


class ReplyPolicy:
    """Decides what each model reply leads to, for one protocol, and when a turn stops for want of
    progress (``stall_limit`` steps in a row without it). One subclass per protocol (``reply_policy``):
    each owns its state and says what changes as a decision; nothing outside reads or sets it."""

    name: ClassVar[ProtocolName]

    def __init__(
        self,
        stall_limit: int = DEFAULT_STALL_LIMIT,
        failing_limit: int = DEFAULT_FAILING_LIMIT,
        shape_limit: int = DEFAULT_SHAPE_LIMIT,
    ) -> None:
        self.stall_limit = stall_limit
        self.failing_limit = failing_limit
        self.shape_limit = shape_limit
        self.begin_turn()

    @property
    def in_text(self) -> bool:
        """The actions are code blocks in the reply now (no tool schemas are offered)."""
        return False

    @property
    def reads_written_calls(self) -> bool:
        """Calls written as text are made (``decide`` needs the offered tools)."""
        return False

    def resume(self, history: Sequence[ModelMessage]) -> None:
        """A stored session was loaded (called once): its state goes on from it."""

    def begin_turn(self, requests_left: int | None = None) -> None:
        """A new turn (or the user spoke into it): nothing earlier counts towards the progress bound.

        ``requests_left``: the model requests the turn may still make of ``max_model_requests`` (what
        steering leaves of it too). The bound is lowered to it, so that a fault loop ends on the bound
        ("stalled"), never on that outer limit. ``None``: not lowered (a caller's explicit ``max_turns``).
        """
        limit = self.stall_limit if requests_left is None else max(1, min(self.stall_limit, requests_left))
        failing = (
            self.failing_limit if requests_left is None else max(1, min(self.failing_limit, requests_left))
        )
        configured = self.stall_limit if limit != self.stall_limit else None
        self.meter = ProgressMeter(limit, configured, failing, shape_limit=self.shape_limit)

    def after_step(self, step: Sequence[ModelMessage]) -> StepVerdict:
        """What follows a step that did not end the turn (``step``: its reply and what that led to).

        ``StopTurn``: the ``stall_limit``-th step in a row without progress (every protocol);
        ``SwitchProtocol``: the protocol changed (``auto``); ``None``: ask the model again.
        """
        return self.meter.after(step)

    def decide(
        self,
        reply: ModelResponse,
        history: Sequence[ModelMessage],
        turn: Sequence[ModelMessage] | None,
        tools: ToolParameters,
    ) -> ReplyDecision:
        """The decision for ``reply``, given the history before it and this turn's part of it.

        ``turn``: the turn's messages before the reply (``None`` when a compaction rewrote them:
        then only the reply's own calls run); ``tools``: the offered tools (for calls written as text).
        """
        raise NotImplementedError

    def switch_reason(self, blocks: Sequence[TextAction], history: Sequence[ModelMessage]) -> str | None:
        """Why the protocol switches to text on a reply without tool calls, if it does (``auto`` only)."""
        return None

    def guard(self, call: ToolCallPart, history: Sequence[ModelMessage]) -> GuardedCall | None:
        """The refusal of a call that failed in the step before (``auto`` only), what the model is told instead."""
        return None


def _answer_or_nudge(
    reply: ModelResponse, found: tuple[NudgeReason, str, ModelRequest] | NoAnswer | None, claims: bool
) -> ReplyDecision:
    """The decision a nudge row's finding gives (every protocol): no answer, a nudge, or the answer."""
    if isinstance(found, NoAnswer):
        return NotAnAnswer(reply, found.reason, found.message, claims)
    if found is not None:
        reason, told, request = found
        return NudgeModel(reply, reason, told, request, claims)
    return FinalAnswer(reply, claims)


class ToolsPolicy(ReplyPolicy):
    """``tools``: the model calls tools well; a reply's tool calls run and anything else is the
    answer — but for the app's own words (``OWN_WORDS_RULES``, as in every protocol): never an answer."""

    name = "tools"

    def decide(
        self,
        reply: ModelResponse,
        history: Sequence[ModelMessage],
        turn: Sequence[ModelMessage] | None,
        tools: ToolParameters,
    ) -> ReplyDecision:
        cut = cut_reply(reply)
        if cut is not None:
            return cut
        calls = [p for p in reply.parts if isinstance(p, ToolCallPart)]
        if calls:
            return RunCalls(reply, calls)
        ran = turn is None or acted(turn)
        claims = claims_output(reply_text(reply), ran=ran)  # a flag for the UI only
        if turn is not None:
            found = nudge_for(reply, [*history, reply], [*turn, reply], text_mode=False, rules=OWN_WORDS_RULES)
            return _answer_or_nudge(reply, found, claims)
        return FinalAnswer(reply, claims)


class _BlocksPolicy(ReplyPolicy):
    """What ``text`` and ``auto`` share: a reply's code blocks may run, and a reply that would end the
    turn without acting may get a nudge (``nudge.py``)."""

    def decide(
        self,
        reply: ModelResponse,
        history: Sequence[ModelMessage],
        turn: Sequence[ModelMessage] | None,
        tools: ToolParameters,
    ) -> ReplyDecision:
        cut = cut_reply(reply)
        if cut is not None:
            return cut
        written = with_written_calls(reply, tools) if self.reads_written_calls else None
        response = written or reply
        calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
        if calls:
            return RunCalls(response, calls, in_order=written is not None)
        text = reply_text(reply)
        blocks = text_actions(text)
        whole = [*history, reply]
        now = [*turn, reply] if turn is not None else None
        claims = claims_output(text, ran=now is None or acted(now))
        switch = self.switch_reason(blocks, history)
        runs = self.in_text or switch is not None or (now is not None and self.repairs(reply, blocks, now))
        # the code that just ran, restated, is the answer; the code that just failed, sent again, is a step
        # (it fails the same way and counts against progress, as a repeated tool call does)
        restated = now is not None and repeats_last_actions(blocks, now) and not last_action_failed(now[:-1])
        if runs and blocks and not restated:
            if switch is not None:
                self._switch_to_text()
            return RunBlocks(reply, blocks, switch, claims)
        if now is not None:
            return _answer_or_nudge(reply, nudge_for(reply, whole, now, text_mode=self.in_text), claims)
        return FinalAnswer(reply, claims)

    def repairs(self, reply: ModelResponse, blocks: Sequence[TextAction], turn: Sequence[ModelMessage]) -> bool:
        """Whether a reply's blocks run although the protocol is on tool calls (``auto``)."""
        return False

    def _switch_to_text(self) -> None:
        raise NotImplementedError  # only ``auto`` switches, and only it gives a switch reason


class TextPolicy(_BlocksPolicy):
    """``text``: every reply's code blocks are its actions; a reply without one is the answer."""

    name = "text"

    @property
    def in_text(self) -> bool:
        return True


class AutoPolicy(_BlocksPolicy):
    """``auto``: tool calls until the model shows it cannot make them, then text for good.

    Owns the switch: on a reply whose code block is its action while no tool call ever worked
    (``RunBlocks.switch``), or after ``AUTO_SWITCH_MALFORMED`` steps in a row of only broken calls
    (``SwitchProtocol``). On tool calls it reads calls written as text, runs the blocks of a reply
    that repairs a failed call or answers a nudge, and refuses a call that just failed the same way.
    """

    name = "auto"

    def __init__(
        self,
        stall_limit: int = DEFAULT_STALL_LIMIT,
        failing_limit: int = DEFAULT_FAILING_LIMIT,
        shape_limit: int = DEFAULT_SHAPE_LIMIT,
    ) -> None:
        super().__init__(stall_limit, failing_limit, shape_limit)
        self._text = False

    @property
    def in_text(self) -> bool:
        return self._text

    @property
    def reads_written_calls(self) -> bool:
        return not self._text

    def resume(self, history: Sequence[ModelMessage]) -> None:
        """A session that had switched to text stays in text."""
        if is_text_session(history):
            self._text = True

    def after_step(self, step: Sequence[ModelMessage]) -> StepVerdict:
        stop = self.meter.after(step)
        if stop is not None:
            return stop
        broken = self.meter.broken_run
        if not self._text and broken >= AUTO_SWITCH_MALFORMED:
            self._switch_to_text()
            return SwitchProtocol(f"the model sent broken tool calls {broken} times in a row")
        return None

    def switch_reason(self, blocks: Sequence[TextAction], history: Sequence[ModelMessage]) -> str | None:
        """The reply has a runnable block and the model never made a working tool call in this session."""
        if self._text or not blocks or had_working_tool_call(history):
            return None
        return SWITCH_REASON

    def repairs(self, reply: ModelResponse, blocks: Sequence[TextAction], turn: Sequence[ModelMessage]) -> bool:
        """On tool calls: a reply's blocks run when the turn's last tool call failed (the block is the
        next step, written instead of called) or the reply answers a nudge. After a tool call that
        worked, blocks are examples in an answer. ``turn[-1]`` is the reply."""
        if self._text or not blocks:
            return False
        return last_action_failed(turn, "tool") or answers_nudge(reply, turn)

    def guard(self, call: ToolCallPart, history: Sequence[ModelMessage]) -> GuardedCall | None:
        return guard_call(call, history)

    def _switch_to_text(self) -> None:
        self._text = True


POLICIES: dict[ProtocolName, type[ReplyPolicy]] = {"tools": ToolsPolicy, "text": TextPolicy, "auto": AutoPolicy}


def reply_policy(
    protocol: ProtocolName,
    stall_limit: int = DEFAULT_STALL_LIMIT,
    failing_limit: int = DEFAULT_FAILING_LIMIT,
    shape_limit: int = DEFAULT_SHAPE_LIMIT,
) -> ReplyPolicy:
    """The policy of ``protocol``, fresh (its state: the progress bound, and ``auto``'s switch)."""
    return POLICIES[protocol](stall_limit, failing_limit, shape_limit)


__all__ = [
    "AUTO_SWITCH_MALFORMED",
    "POLICIES",
    "AutoPolicy",
    "TextPolicy",
    "ToolsPolicy",
    "reply_policy",
    "CutReply",
    "FinalAnswer",
    "NotAnAnswer",
    "NudgeModel",
    "ReplyDecision",
    "ReplyPolicy",
    "RunBlocks",
    "RunCalls",
    "claims_output",
    "cut_returns",
    "repeats_last_actions",
]
