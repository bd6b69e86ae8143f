"""Helpers on pydantic-ai message lists: what is sent to the model, and keeping a history valid."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from freeact_tui.store.meta_keys import NUDGE_KEY, SWITCH_KEY, TEXT_ACTIONS_KEY
from freeact_tui.store.prompt_record import CANCELLED_NOTE, CUT_KEY, INTERRUPTED
from freeact_tui.store.step_record import INTERRUPTED_STEP, StepRecord


def prepare_for_model(history: Sequence[ModelMessage]) -> list[ModelMessage]:
    """Merge adjacent requests (left by a rejected or cancelled turn) so providers that require
    alternating roles accept the history; the stored history is never changed."""
    out: list[ModelMessage] = []
    for msg in history:
        if isinstance(msg, ModelRequest) and out and isinstance(out[-1], ModelRequest):
            prev = out[-1]
            parts: list[ModelRequestPart] = [*prev.parts, *msg.parts]
            out[-1] = ModelRequest(parts=parts, instructions=prev.instructions or msg.instructions)
        else:
            out.append(msg)
    return out


def partial_response(response: ModelResponse | None) -> ModelResponse | None:
    """What of an interrupted model response is worth keeping: its text and thinking, no half tool calls."""
    if response is None:
        return None
    parts = [p for p in response.parts if isinstance(p, TextPart | ThinkingPart) and p.content]
    if not parts:
        return None
    return ModelResponse(parts=parts, model_name=response.model_name, timestamp=response.timestamp)


def cancelled_response(partial: ModelResponse | None) -> ModelResponse:
    """What closes a request cancelled while the model answered: what it had streamed (text and
    thinking) and, when it had written no text yet, a note that the request was cancelled, so the
    next prompt is the one answered (not merged into this request, or read as its continuation)."""
    kept = partial_response(partial)
    cut = {CUT_KEY: "cancelled"}  # the log marks it incomplete on resume, as the live log did
    if kept is None:
        return ModelResponse(parts=[TextPart(CANCELLED_NOTE)], metadata=cut)
    kept = replace(kept, metadata={**(kept.metadata or {}), **cut})
    if any(isinstance(p, TextPart) for p in kept.parts):
        return kept
    return replace(kept, parts=[*kept.parts, TextPart(CANCELLED_NOTE)])


def unanswered_prompt(request: ModelMessage, response: ModelMessage) -> bool:
    """``response`` closes ``request``, the user's prompt, cancelled before the model answered any of it.

    Such a pair stays in the session (the log shows it, marked cancelled) and is left out of what
    the model is sent (#45): a small model answered the next request with the cancelled one. A
    request cancelled mid-answer keeps what was shown; one cancelled after actions ran keeps them.
    """
    if not (isinstance(request, ModelRequest) and isinstance(response, ModelResponse)):
        return False
    cut = isinstance(response.metadata, dict) and response.metadata.get(CUT_KEY) == "cancelled"
    said = any(
        isinstance(p, ToolCallPart) or (isinstance(p, TextPart) and p.content != CANCELLED_NOTE)
        for p in response.parts
    )
    meta = request.metadata if isinstance(request.metadata, dict) else {}
    prompt = (
        all(isinstance(p, UserPromptPart | SystemPromptPart) for p in request.parts)
        and prompt_parts(request) > 0
        and not (meta.keys() & {NUDGE_KEY, SWITCH_KEY, TEXT_ACTIONS_KEY})
    )
    return cut and not said and prompt


def prompt_parts(request: ModelMessage) -> int:
    """How many of a request's parts are the user's (a session's first request starts with the system prompt)."""
    return (
        sum(isinstance(p, UserPromptPart) for p in request.parts) if isinstance(request, ModelRequest) else 0
    )


def tool_calls(response: ModelResponse) -> list[ToolCallPart]:
    return [p for p in response.parts if isinstance(p, ToolCallPart)]


def unanswered_calls(history: Sequence[ModelMessage]) -> list[ToolCallPart]:
    """Tool calls of the last response that have no return yet (a crash or kill mid-turn)."""
    if not history or not isinstance(history[-1], ModelResponse):
        return []
    return tool_calls(history[-1])


def interrupted_returns(
    calls: Sequence[ToolCallPart],
    done: dict[str, Any],
    records: dict[str, StepRecord] | None = None,
    partial: dict[str, str] | None = None,
) -> ModelRequest:
    """Tool returns for every call: the finished ones keep their content, the others say interrupted
    after what they printed before (``partial``, per call id: the live log showed it).

    ``records`` (per call id) are stored with the returns for UIs (outcome, subagent id); models never see them.
    """
    meta = records or {}
    seen = partial or {}

    def cut(call_id: str) -> str:
        printed = seen.get(call_id, "").rstrip("\n")
        return f"{printed}\n{INTERRUPTED}" if printed else INTERRUPTED

    return ModelRequest(
        parts=[
            ToolReturnPart(
                tool_name=c.tool_name,
                content=done.get(c.tool_call_id) if c.tool_call_id in done else cut(c.tool_call_id),
                tool_call_id=c.tool_call_id,
                metadata=meta.get(c.tool_call_id, INTERRUPTED_STEP).to_meta(),
            )
            for c in calls
        ]
    )


INCOMPLETE_MARK = "\n\n[incomplete: the reply was cut off]"


def incomplete_response(partial: ModelResponse) -> ModelResponse | None:
    """What to keep of a reply that broke off mid-stream: its thoughts and text, marked incomplete.

    Tool calls are dropped (their arguments may be cut too, and they never ran). ``None`` when
    there is no text to keep.
    """
    kept = partial_response(partial)
    if kept is None or not any(isinstance(p, TextPart) for p in kept.parts):
        return None
    parts = [p for p in kept.parts if isinstance(p, TextPart | ThinkingPart)]  # all of them: for the type
    last = max(i for i, p in enumerate(parts) if isinstance(p, TextPart))
    parts[last] = TextPart(parts[last].content + INCOMPLETE_MARK)
    return replace(kept, parts=parts)
