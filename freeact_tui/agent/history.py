"""Helpers on pydantic-ai message lists: what is sent to the model, and keeping a history valid."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
)

from freeact_tui.store.prompt_record import INTERRUPTED
from freeact_tui.store.step_record import INTERRUPTED_STEP, StepRecord


def partial_response(response: ModelResponse | None) -> ModelResponse | None:
    """What of an interrupted model response is worth keeping: its text and thinking, no half tool calls."""
    if response is None:
        return None
    parts = [p for p in response.parts if isinstance(p, TextPart | ThinkingPart) and p.content]
    if not parts:
        return None
    return ModelResponse(parts=parts, model_name=response.model_name, timestamp=response.timestamp)


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
