"""Opening a streamed model request without rescanning a long history that is known to be plain.

pydantic-ai's ``model_request_stream`` looks through the whole history several times per request
(for instructions, retry parts and model-settings deltas) to decide what to prepare: at 10,000
messages that is most of the loop's cost per request. ``PreparedHistory`` already knows the answers
(it sees every message once), and hands them over as a ``PreparedMessages`` list. For such a list
this opens the stream the way ``model_request_stream`` does for a history without those parts;
anything else, or a pydantic-ai whose internals moved, takes the public route.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from pydantic_ai.direct import model_request_stream
from pydantic_ai.messages import InstructionPart, ModelMessage
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.settings import ModelSettings

try:  # internals of pydantic_ai.direct.model_request_stream (checked by tests/test_context_trim.py)
    from pydantic_ai.direct import _break_special_tokens, _prepare_model  # pyright: ignore[reportPrivateUsage]
    from pydantic_ai.models._batch_model import check_resumable
    from pydantic_ai.models._request_timeout import open_request_stream

    FAST_PATH = True
except ImportError:  # pragma: no cover - a pydantic-ai that moved them: the public route still works
    FAST_PATH = False


class PreparedMessages(list[ModelMessage]):
    """A prepared history that says what pydantic-ai would otherwise look for in it."""

    plain: bool = False
    """No retry prompts, retry feedback or model-settings deltas anywhere in it."""
    instructions: str | None = None
    """The instructions of the latest request that has any."""


def open_model_stream(
    model: Model,
    messages: Sequence[ModelMessage],
    *,
    settings: ModelSettings | None,
    parameters: ModelRequestParameters,
) -> AbstractAsyncContextManager[StreamedResponse]:
    """``model_request_stream(model, messages, …)``, without whole-history scans for a plain ``PreparedMessages``."""
    if not (FAST_PATH and isinstance(messages, PreparedMessages) and messages.plain):
        return model_request_stream(
            model, list(messages), model_settings=settings, model_request_parameters=parameters
        )
    instance: Any = _prepare_model(model, None)
    history = list(messages)
    check_resumable(instance, history)
    if parameters.instruction_parts is None and messages.instructions is not None:
        parameters = dataclasses.replace(
            parameters, instruction_parts=[InstructionPart(content=messages.instructions)]
        )
    return open_request_stream(instance, _break_special_tokens(instance, history), settings, parameters)


__all__ = ["FAST_PATH", "PreparedMessages", "open_model_stream"]
