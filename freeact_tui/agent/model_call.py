"""One streamed model request: stream events become agent events; transient API errors are retried."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any

from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelConnectionError,
    ModelRateLimitError,
    ModelServerError,
    ModelUnavailableError,
    UnexpectedModelBehavior,
)
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.settings import ModelSettings

from freeact_tui.agent.model_stream import open_model_stream
from freeact_tui.events import AgentEvent, ModelRetry, Response, ResponseChunk, Thoughts, ThoughtsChunk

# Seconds to wait before each retry of a transient error (rate limit, overload, 5xx, connection).
RETRY_DELAYS = (1.0, 3.0)


class ModelCallError(Exception):
    """The request failed for good; ``str(error)`` is the message for the user.

    ``partial`` is what the model had streamed (and the user had seen) before it failed, if anything.
    """

    def __init__(self, message: str, partial: ModelResponse | None = None) -> None:
        super().__init__(message)
        self.partial = partial


def event_for(part_event: Any, ids: dict[str, Any]) -> AgentEvent | None:
    """The agent event of one model stream event (thinking and text; tool calls are not streamed)."""
    match part_event:
        case PartStartEvent(part=ThinkingPart(content=content)) if content:
            return ThoughtsChunk(content, **ids)
        case PartStartEvent(part=TextPart(content=content)) if content:
            return ResponseChunk(content, **ids)
        case PartDeltaEvent(delta=ThinkingPartDelta(content_delta=delta)) if delta:
            return ThoughtsChunk(delta, **ids)
        case PartDeltaEvent(delta=TextPartDelta(content_delta=delta)) if delta:
            return ResponseChunk(delta, **ids)
        case PartEndEvent(part=ThinkingPart(content=content)):
            return Thoughts(content, **ids)
        case PartEndEvent(part=TextPart(content=content)):
            return Response(content, **ids)
    return None


async def request_response(
    model: Model,
    messages: Sequence[ModelMessage],
    *,
    settings: ModelSettings | None,
    parameters: ModelRequestParameters,
    emit: Callable[[AgentEvent], None],
    ids: dict[str, Any],
    on_progress: Callable[[ModelResponse], None],
) -> ModelResponse:
    """Stream one model response, emitting thoughts and text as they come.

    ``on_progress`` sees the response so far (kept if the turn is cancelled mid-stream). A
    transient error is retried only if nothing was shown yet.

    Raises:
        ModelCallError: the request failed and will not be retried.
    """
    attempts = len(RETRY_DELAYS)
    for attempt in range(attempts + 1):
        emitted = False
        partial: ModelResponse | None = None
        try:
            async with open_model_stream(model, messages, settings=settings, parameters=parameters) as stream:
                async for part_event in stream:
                    partial = stream.get()
                    on_progress(partial)
                    event = event_for(part_event, ids)
                    if event is not None:
                        emit(event)
                        emitted = True
                return stream.get()
        except (ModelAPIError, UnexpectedModelBehavior) as exc:
            if emitted:
                raise ModelCallError(
                    _cut_message(describe_model_error(exc, rolled_back=False)), partial
                ) from exc
            if not is_retryable(exc) or attempt >= attempts:
                raise ModelCallError(describe_model_error(exc)) from exc
            reason = describe_model_error(exc, rolled_back=False)
        except (OSError, TimeoutError) as exc:
            if emitted:
                raise ModelCallError(_cut_message(f"Connection lost: {exc}"), partial) from exc
            if attempt >= attempts:
                raise ModelCallError(
                    f"Cannot reach the model: {exc}. The turn was rolled back; try again."
                ) from exc
            reason = f"Cannot reach the model: {exc}"
        emit(ModelRetry(reason, attempt + 1, attempts, RETRY_DELAYS[attempt], **ids))
        await asyncio.sleep(RETRY_DELAYS[attempt])
    raise ModelCallError("The model request failed.")  # pragma: no cover - the loop always returns or raises


def _cut_message(cause: str) -> str:
    return f"The model's reply was cut off ({cause}). The partial reply is kept, marked incomplete."


def is_retryable(exc: Exception) -> bool:
    """Rate limits, overload, server errors and dropped connections are worth another try."""
    if isinstance(exc, ModelRateLimitError | ModelServerError | ModelUnavailableError | ModelConnectionError):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status in (408, 429) or status >= 500)


def describe_model_error(exc: Exception, *, rolled_back: bool = True) -> str:
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    detail = str(exc)
    if body and not isinstance(body, str):
        try:
            detail = json.dumps(body)[:500]
        except (TypeError, ValueError):
            pass
    prefix = f"Model API error (HTTP {status})" if status else f"Model error ({type(exc).__name__})"
    if not rolled_back:
        return f"{prefix}: {detail}"
    return f"{prefix}: {detail}. The turn was rolled back; try again."
