"""Progress of a turn: one notion, one bound, the same in every protocol (#40).

A step (one model reply and what it led to) made progress when an action ran and its result is
new to the turn: an error that differs from every earlier failure of the turn (compared by
``normalise_error``) and whose kind (``error_kind``: the exception's name) has not already failed
``KIND_REPEATS`` times in the turn — a message made up anew each time (a random word, an invented
name) does not make the same kind of failure new — or a success whose code (by ``code_identity``: comments and layout
ignored) and output are not an earlier step's. Every other
step counts against it: broken calls (bad JSON arguments, unknown tools), refused calls (the
repeat guard, a rule), a failure met before, a step repeated word for word, an empty or
non-answer reply the policy asked again about. After ``limit`` steps in a row without progress
the turn stops with one ``StopTurn`` that says what kept failing and what the user can do.

The request budget (``max_model_requests``) stays the outer limit; it never ends a fault loop.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart

from freeact_tui.agent.policy.errors import error_kind, error_line, normalise_error
from freeact_tui.agent.policy.nudge import nudge_reason
from freeact_tui.agent.policy.outcomes import outcomes
from freeact_tui.store.step_record import StepRecord
from freeact_tui.store.transcript import content_text

DEFAULT_STALL_LIMIT = 3
"""Steps in a row without progress before a turn stops (``max_steps_without_progress``)."""

KIND_REPEATS = 3
"""Failures of one kind (``error_kind``) a turn may meet, each with a new message, before another of
that kind no longer counts as progress."""

FaultKind = Literal["broken call", "refused call", "repeated failure", "no answer"]


@dataclass(frozen=True)
class Fault:
    """Why a step made no progress: its kind and what the user reads of it (one line)."""

    kind: FaultKind
    detail: str


@dataclass(frozen=True)
class StopTurn:
    """End the turn: ``steps`` steps in a row made no progress; ``message`` says what failed and what to do."""

    message: str
    steps: int


@dataclass(frozen=True)
class SwitchProtocol:
    """``auto``: act in code blocks from now on (the model cannot call tools); ``reason`` says why."""

    reason: str


StepVerdict = StopTurn | SwitchProtocol | None

# -- one step ------------------------------------------------------------------------------------


@dataclass
class TurnProgress:
    """What a turn has met so far: its failures (normalised) and its successful steps (code, output)."""

    failures: set[str] = field(default_factory=set)
    kinds: dict[str, int] = field(default_factory=dict)
    """How many failing steps met each kind of error (``error_kind``)."""
    successes: set[tuple[str | None, str]] = field(default_factory=set)
    """Successful steps by (``code_identity`` of their code, output)."""

    def judge(self, step: Sequence[ModelMessage]) -> Fault | None:
        """``None`` when ``step`` made progress, else why not; then remember what the step met.

        ``step``: the messages of one step (the reply first, then what it led to).
        """
        fault = self._fault(step)
        met: set[str] = set()
        for o in outcomes(step):
            if o.failed and not o.guarded:
                self.failures.add(normalise_error(o.output))
                met.add(error_kind(o.output))
            elif o.ran and not o.failed:
                self.successes.add((code_identity(o.code), o.output))
        for kind in met:
            self.kinds[kind] = self.kinds.get(kind, 0) + 1
        return fault

    def _fault(self, step: Sequence[ModelMessage]) -> Fault | None:
        faults: list[Fault] = []
        for o in outcomes(step):
            if o.guarded:
                faults.append(Fault("refused call", error_line(o.output)))
            elif o.failed:
                error = normalise_error(o.output)
                if error not in self.failures and self.kinds.get(error_kind(o.output), 0) < KIND_REPEATS:
                    return None
                faults.append(Fault("repeated failure", error_line(o.output)))
            elif o.ran:
                if (code_identity(o.code), o.output) not in self.successes:
                    return None
                faults.append(Fault("repeated failure", "the same step, with the same output, again"))
            else:  # rejected and the turn goes on: the user said what to do instead
                return None
        faults.extend(Fault("broken call", error_line(text)) for text in broken_calls(step))
        for message in step:
            reason = nudge_reason(message)
            if reason is not None:
                faults.append(Fault("no answer", reason))
        return faults[0] if faults else Fault("no answer", "the reply neither acted nor answered")


def code_identity(code: str | None) -> str | None:
    """What identifies a step's code across attempts: its syntax tree, without comments or layout.

    Code that does not parse as Python (shell lines, cell magics) by its text with spacing collapsed.
    """
    if code is None:
        return None
    try:
        return ast.dump(ast.parse(code))
    except (SyntaxError, ValueError):
        return " ".join(code.split())


def broken_calls(step: Sequence[ModelMessage]) -> list[str]:
    """What the model was told for each broken call of ``step`` (bad arguments, an unknown tool)."""
    return [
        content_text(p.content)
        for m in step
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart) and StepRecord.of_part(p).malformed
    ]


def only_broken_calls(step: Sequence[ModelMessage]) -> bool:
    """Every call of the step was broken (and there was one)."""
    return bool(broken_calls(step)) and next(outcomes(step), None) is None


# -- the bound -----------------------------------------------------------------------------------

_HINTS: dict[FaultKind, str] = {
    "broken call": "use a model that is better at tool calls, or let it write code blocks (--action-protocol text)",
    "refused call": "allow the action (a rule, or --allow when headless) or tell the model to do it another way",
    "repeated failure": "fix the cause, or tell the model what to do differently",
    "no answer": "rephrase the request, or try another model",
}
"""What the user can do, by the kind of fault (in the order the faults came)."""

_WHAT: dict[FaultKind, str] = {
    "broken call": "broken tool call",
    "refused call": "refused call",
    "repeated failure": "the same failure again",
    "no answer": "no answer",
}


def stop_message(faults: Sequence[Fault], limit: int, configured: int | None = None) -> str:
    """The one message of a turn that stopped: what kept failing, what the user can do."""
    seen: list[Fault] = []
    for f in faults:
        if f not in seen:
            seen.append(f)
    listed = "; ".join(f"{_WHAT[f.kind]}: {_short(f.detail)}" for f in seen[:3])
    kinds = list(dict.fromkeys(f.kind for f in faults))
    hints = "; ".join(_HINTS[k] for k in kinds)
    return (
        f"The turn stopped: {len(faults)} steps in a row made no progress ({listed}). "
        f"To go on, {hints}. ({_bound(limit, configured)})"
    )


def _bound(limit: int, configured: int | None) -> str:
    if configured is None or configured == limit:
        return f"The bound is max_steps_without_progress = {limit}."
    return (
        f"The bound is max_steps_without_progress = {configured}, lowered to {limit}: "
        "the model requests left in this turn's budget."
    )


def _short(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


@dataclass
class ProgressMeter:
    """The progress bound of one turn: steps in a row without progress, and the broken-call run for ``auto``."""

    limit: int = DEFAULT_STALL_LIMIT
    configured: int | None = None
    """The bound as set, when ``limit`` was lowered to the requests left in the turn's budget."""
    progress: TurnProgress = field(default_factory=TurnProgress)
    faults: list[Fault] = field(default_factory=list)
    """The faults of the steps since the last progress."""
    broken_run: int = 0
    """Steps in a row whose calls were all broken."""

    def after(self, step: Sequence[ModelMessage]) -> StopTurn | None:
        """Count ``step``; the stop when it is the ``limit``-th in a row without progress."""
        self.broken_run = self.broken_run + 1 if only_broken_calls(step) else 0
        fault = self.progress.judge(step)
        if fault is None:
            self.faults = []
            return None
        self.faults.append(fault)
        if len(self.faults) >= self.limit:
            return StopTurn(stop_message(self.faults, self.limit, self.configured), len(self.faults))
        return None


__all__ = [
    "DEFAULT_STALL_LIMIT",
    "Fault",
    "FaultKind",
    "ProgressMeter",
    "StepVerdict",
    "StopTurn",
    "SwitchProtocol",
    "TurnProgress",
    "broken_calls",
    "code_identity",
    "only_broken_calls",
    "stop_message",
]
