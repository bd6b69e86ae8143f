"""What a cancelled request leaves in the history, and what of it the model is sent: one table (#45).

A cancel ends a turn wherever it is: before the model's first token, while it thinks, while it
streams a tool call or text, while an action waits for approval, runs, or runs a subagent. Every
path (Esc in the TUI, ``session/cancel`` over ACP, SIGINT in ``run``, a quit, the parent of a
subagent cancelled) ends in ``Turn._finish_cancelled``, which records ``close_for`` of where the
turn was; every history sent to a model (live, resumed, a subagent's) is prepared by
``PreparedHistory``, which asks ``contribution`` what a stored close sends. The session keeps all
of it (the log shows it, marked cancelled); the model is sent:

================  ==========================  ======================================================
cancelled         the reply so far            the request's asks (the user's prompt, a nudge)
================  ==========================  ======================================================
before any token  left out                    left out
mid-thinking      left out                    left out
mid-tool-call     left out (it never ran)     left out
mid-text          sent, as shown              sent
during an action  the calls and their (interrupted) returns: no close is written
================  ==========================  ======================================================

A request cancelled before any answer is thus left out, and the app's close of it (``CANCELLED_NOTE``,
kept in the session for freeact, which reads the file) is never sent: a small model answered the next
request with the cancelled one, or with that note word for word. What a left-out request carried
beside its asks stays, because it records what happened rather than asking for anything: the system
prompt, a compaction summary, the returns of calls (each call needs its return), a text-action results
message, the switch to text actions, and what the agent put in front of a prompt (the user's own
``!command`` runs, notes after an undo). Decided by the parts' structure, never by their words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    UserPromptPart,
)

from freeact_tui.agent.history import partial_response
from freeact_tui.events import Phase
from freeact_tui.store.meta_keys import COMPACTION_KEY, NUDGE_KEY, SWITCH_KEY, TEXT_ACTIONS_KEY
from freeact_tui.store.prompt_record import CANCELLED_NOTE, CUT_KEY, added_items
from freeact_tui.text.encodable import encodable


class CancelPoint(StrEnum):
    """Where a turn was when the user cancelled it."""

    BEFORE_REPLY = "before any token"
    THINKING = "mid-thinking"
    TOOL_CALL = "mid-tool-call"
    TEXT = "mid-text"
    ACTION = "during an action"
    """Waiting for approval, running, or running a subagent: the reply with its calls is recorded."""


@dataclass(frozen=True)
class Contribution:
    """What a cancelled exchange adds to the history, and what of it the model is sent."""

    close: bool
    """A response closes the cancelled request in the session (what the model had streamed)."""
    reply: bool
    """The model is sent that close (its text, as the user saw it)."""
    asks: bool
    """The model is sent what the cancelled request asked (the user's prompt, a nudge)."""


_LEFT_OUT = Contribution(close=True, reply=False, asks=False)

CONTRIBUTIONS: Mapping[CancelPoint, Contribution] = {
    CancelPoint.BEFORE_REPLY: _LEFT_OUT,
    CancelPoint.THINKING: _LEFT_OUT,  # thoughts are no answer the user saw
    CancelPoint.TOOL_CALL: _LEFT_OUT,  # a half call never ran
    CancelPoint.TEXT: Contribution(close=True, reply=True, asks=True),  # what was shown stays, marked cut
    CancelPoint.ACTION: Contribution(close=False, reply=True, asks=True),  # the calls answered it
}
"""The table of the module docstring."""


def point_of(phase: Phase, reply: ModelResponse | None) -> CancelPoint:
    """Where a turn in ``phase`` was, with ``reply`` what the model had streamed of its current response
    (a stored close reads the same: its half tool calls were dropped, so it reads as thinking or as before
    any token, the same row)."""
    if phase in (Phase.APPROVAL, Phase.EXECUTION, Phase.SUBAGENT):
        return CancelPoint.ACTION
    parts = reply.parts if reply is not None else []
    if any(isinstance(p, TextPart) and p.content.strip() and p.content != CANCELLED_NOTE for p in parts):
        return CancelPoint.TEXT
    if any(isinstance(p, ToolCallPart) for p in parts):
        return CancelPoint.TOOL_CALL
    if any(isinstance(p, ThinkingPart) and p.content for p in parts):
        return CancelPoint.THINKING
    return CancelPoint.BEFORE_REPLY


def close_for(
    phase: Phase, history: Sequence[ModelMessage], partial: ModelResponse | None
) -> ModelResponse | None:
    """The response that closes the request a turn in ``phase`` was cancelled on (``None``: there is none
    to close). It keeps what the model had streamed (text and thinking, no half tool calls), marked cut
    for the log; with no text it carries ``CANCELLED_NOTE``, for freeact reading the session — this app
    never sends it (``contribution``)."""
    if not history or not isinstance(history[-1], ModelRequest):
        return None
    if not CONTRIBUTIONS[point_of(phase, partial)].close:
        return None
    cut = {CUT_KEY: "cancelled"}
    kept = partial_response(partial)
    if kept is None:
        return ModelResponse(parts=[TextPart(CANCELLED_NOTE)], metadata=cut)
    kept = replace(kept, metadata={**(kept.metadata or {}), **cut})
    if point_of(phase, kept) is CancelPoint.TEXT:
        return kept
    return replace(kept, parts=[*kept.parts, TextPart(CANCELLED_NOTE)])


def is_close(message: ModelMessage) -> bool:
    """A stored response that closes a cancelled request (``close_for``; a session written before the
    record, 2026-11-27, has the note alone)."""
    if not isinstance(message, ModelResponse):
        return False
    if isinstance(message.metadata, dict) and message.metadata.get(CUT_KEY) == "cancelled":
        return True
    return any(isinstance(p, TextPart) and p.content == CANCELLED_NOTE for p in message.parts)


def contribution(close: ModelResponse) -> Contribution:
    """What a stored close and the request it closes send the model (a close is never cut in an action)."""
    return CONTRIBUTIONS[point_of(Phase.MODEL, close)]


def open_requests(history: Sequence[ModelMessage], close_at: int) -> Sequence[ModelRequest]:
    """The requests a close at ``history[close_at]`` answers: every request since the response before it."""
    start = close_at
    while start > 0 and isinstance(history[start - 1], ModelRequest):
        start -= 1
    return [m for m in history[start:close_at] if isinstance(m, ModelRequest)]


def kept_parts(request: ModelRequest) -> list[ModelRequestPart]:
    """The parts of ``request`` still sent when it was cancelled before any answer: what records what
    happened (see the module), not what asked for an answer."""
    meta: dict[str, Any] = request.metadata if isinstance(request.metadata, dict) else {}
    records = meta.keys() & {COMPACTION_KEY, TEXT_ACTIONS_KEY, SWITCH_KEY}
    kept: list[ModelRequestPart] = []
    for part in request.parts:
        if isinstance(part, RetryFeedbackPart) or (
            isinstance(part, RetryPromptPart) and part.tool_name is None
        ):
            continue  # feedback on a reply: an ask
        if isinstance(part, UserPromptPart) and not records:
            if NUDGE_KEY in meta:
                continue
            added = _added_part(part, added_items(meta))
            if added is not None:
                kept.append(added)
            continue
        kept.append(part)
    return kept


def as_sent(history: Sequence[ModelMessage]) -> list[ModelMessage]:
    """``history`` with what ``contribution`` leaves out taken out, each message otherwise as stored (its
    metadata too): for what reads a history as the model's context, such as a compaction's summary.
    ``PreparedHistory`` does the same message by message (and merges the requests)."""
    out: list[ModelMessage] = []
    for index, message in enumerate(history):
        if isinstance(message, ModelResponse) and is_close(message):
            sends = contribution(message)
            if not sends.asks:
                asked = open_requests(history, index)
                del out[len(out) - len(asked) :]
                out.extend(encodable(replace(r, parts=kept)) for r in asked if (kept := kept_parts(r)))
            if not sends.reply:
                continue
        out.append(encodable(message))
    return out


def _added_part(part: UserPromptPart, added: int) -> UserPromptPart | None:
    """What the agent put in front of the user's words (``PROMPT_KEY``: characters of a text prompt,
    items of a multimodal one), without those words."""
    if added <= 0:
        return None
    content = part.content
    head: Any = content[:added].rstrip("\n") if isinstance(content, str) else list(content)[:added]
    return replace(part, content=head) if head else None


__all__ = [
    "CONTRIBUTIONS",
    "CancelPoint",
    "Contribution",
    "as_sent",
    "close_for",
    "contribution",
    "is_close",
    "kept_parts",
    "open_requests",
    "point_of",
]
