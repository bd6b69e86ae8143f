"""The state of one running turn: the model step in progress and the calls of its last response.

Each call has a phase of its own (approval, execution, subagent), because the calls of one
response run in parallel: while action A runs in the kernel, call B may wait for approval. The
turn's phase is the most advanced phase of any call (execution before subagent before approval),
or the model phase between calls.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_ai.messages import ModelResponse, ToolCallPart

from freeact_tui.events import Phase, UsageUpdate
from freeact_tui.store.step_record import StepRecord

_RANK = {Phase.EXECUTION: 3, Phase.SUBAGENT: 2, Phase.APPROVAL: 1}


@dataclass
class TurnState:
    """Everything a cancelled or failed turn needs to leave a valid history behind."""

    so_far: Callable[[], ModelResponse] | None = None
    """The response streamed so far by the running model request, built when asked (``response``)."""
    calls: list[ToolCallPart] = field(default_factory=list)
    """The tool calls of the last response, while they run."""
    done: dict[str, Any] = field(default_factory=dict)
    """What the model is told for each finished call (by tool call id)."""
    meta: dict[str, StepRecord] = field(default_factory=dict)
    """The record stored with each finished call's return."""
    in_model: bool = False
    received: bool = False
    """The model request of this step has ended: its response is in the history (a cancel from here on cut
    nothing of it)."""
    phases: dict[str, Phase] = field(default_factory=dict)
    """The phase of each running call (by tool call id)."""
    unanswered: UsageUpdate | None = None
    """The usage of the model request that ended with no reply (cut, failed, cancelled): counted live when
    it ended, and kept in the session with what the failure leaves (the kept part, or the error record)."""

    def streamed(self, so_far: Callable[[], ModelResponse]) -> None:
        """The running model request streams; ``so_far()`` is what it has sent (kept if the turn is cancelled)."""
        self.so_far = so_far

    @property
    def response(self) -> ModelResponse | None:
        """The response streamed so far by the model request in progress (built now: as costly as the reply
        is long, so never per delta); ``None`` once it has ended (``received``)."""
        return self.so_far() if self.so_far is not None and not self.received else None

    def reset(self) -> None:
        """A new turn: nothing of the last one is left."""
        self.next_step()
        self.in_model = False

    def next_step(self) -> None:
        """Forget the previous step's response and calls."""
        self.so_far = None
        self.received = False
        self.calls = []
        self.done = {}
        self.meta = {}
        self.phases = {}

    def set_phase(self, corr_id: str, phase: Phase | None) -> None:
        """Set (or, with ``None``, clear) the phase of one call."""
        if phase is None:
            self.phases.pop(corr_id, None)
        else:
            self.phases[corr_id] = phase

    @property
    def phase(self) -> Phase:
        if self.in_model:
            return Phase.MODEL
        if not self.phases:
            return Phase.MODEL if self.calls or self.so_far is not None else Phase.IDLE
        return max(self.phases.values(), key=lambda p: _RANK.get(p, 0))


class TurnError(Exception):
    """Ends a turn with a message of the given kind (a failed model request is rolled back)."""

    def __init__(
        self,
        kind: Literal["model", "kernel", "config", "internal"],
        message: str,
        partial: ModelResponse | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: Literal["model", "kernel", "config", "internal"] = kind
        self.message = message
        self.partial = partial


__all__ = ["TurnError", "TurnState"]
