"""How a reply that did not end on its own is reported: one table from the reply's finish reason to
what every front end says.

A model reply ends with a finish reason (pydantic-ai's ``ModelResponse.finish_reason``). ``stop`` and
``tool_call`` are replies the model ended itself; ``length`` (the reply reached the token limit) and
``content_filter`` (the provider's filter stopped it) are replies cut short, and a cut reply must
never be reported as a complete answer. The model step emits ``ReplyStopped`` for each reason in
``REPLY_STOPS``; the headless status and exit code (``cli/run.py``), the ACP ``stopReason``
(``acp/turn_runner.py``) and the TUI's notice under the answer are read from the same row. A new
reason is a row here, never a test in a front end. The reply policy reads the finish reason before
the reply's parts (``CutReply``): nothing of a cut reply runs (a tool call cut mid-arguments is no
broken call and no protocol fault), and the model is told why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from freeact_tui.events import (
    AgentEvent,
    ApprovalRequest,
    CodeExecutionOutput,
    ReplyStopped,
    Response,
    ToolOutput,
)

StopStatus = Literal["cut", "filtered"]
StopReason = Literal["max_tokens", "refusal"]


@dataclass(frozen=True)
class ReplyStop:
    """What the front ends say of a reply that ended with one finish reason."""

    status: StopStatus
    """The headless ``status`` (its exit code: ``cli/run.py`` ``EXIT_CODES``)."""
    stop_reason: StopReason
    """The ACP ``stopReason``."""
    notice: str
    """The one line shown under the reply (TUI notice, headless stderr)."""
    title: str
    """The notice's title in the TUI."""
    told: str
    """What the model is told of a call in such a reply (it did not run)."""


REPLY_STOPS: dict[str, ReplyStop] = {
    "length": ReplyStop(
        "cut",
        "max_tokens",
        "The model stopped: its reply reached the token limit, so it is incomplete.",
        "Reply cut off",
        "your reply reached the token limit before it was complete.",
    ),
    "content_filter": ReplyStop(
        "filtered",
        "refusal",
        "The provider's content filter stopped the reply, so it is incomplete.",
        "Reply filtered",
        "the provider's content filter stopped your reply before it was complete.",
    ),
}
"""Finish reasons of a reply cut short, and how each is reported. Any other reason is a reply the
model ended itself."""


def reply_stop(finish_reason: str | None) -> ReplyStop | None:
    """The row of ``finish_reason``; ``None`` for a reply the model ended itself."""
    return REPLY_STOPS.get(finish_reason) if finish_reason is not None else None


def stopped_event(finish_reason: str | None, ids: dict[str, Any]) -> ReplyStopped | None:
    """The ``ReplyStopped`` event of a reply that ended with ``finish_reason``, if it was cut short."""
    stop = reply_stop(finish_reason)
    if stop is None or finish_reason is None:
        return None
    return ReplyStopped(finish_reason, stop.notice, **ids)


@dataclass
class LastReply:
    """Whether the main agent's last reply of a turn was cut short, read from the turn's events.

    ``ReplyStopped`` follows its reply's ``Response``; anything the main agent does after it (another
    reply, an action) means the turn went on, and the stop no longer ends it.
    """

    stop: ReplyStop | None = None

    def see(self, event: AgentEvent) -> None:
        if event.agent_id != "main":
            return
        match event:
            case ReplyStopped(finish=finish):
                self.stop = reply_stop(finish)
            case Response() | ApprovalRequest() | CodeExecutionOutput() | ToolOutput():
                self.stop = None


__all__ = ["REPLY_STOPS", "LastReply", "ReplyStop", "reply_stop", "stopped_event"]
