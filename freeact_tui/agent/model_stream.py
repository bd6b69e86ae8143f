"""Opening a streamed model request without rescanning a long history that is known to be plain.

pydantic-ai's ``model_request_stream`` looks through the whole history several times per request
(for instructions, retry parts and model-settings deltas) to decide what to prepare, and for models
whose profile says they may read chat-template tokens in content (open models: local servers,
vLLM, Ollama, …) it rewrites every message's text to break such tokens: at 10,000 messages that
last pass alone takes ~50 ms per request. ``PreparedHistory`` already knows the answers to the
scans (it sees every message once) and hands them over as a ``PreparedMessages`` list, which also
keeps each message's token-broken form, so each message is broken once, not once per request.
For such a list this opens the stream the way ``model_request_stream`` does for a history without
those parts (the private names it needs are in ``pydantic_private.py``); anything else takes the public route.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, SupportsIndex

from pydantic_ai.direct import model_request_stream
from pydantic_ai.messages import InstructionPart, ModelMessage
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.settings import ModelSettings

from freeact_tui.agent.pydantic_private import (
    break_special_tokens_in_messages,
    check_resumable,
    open_request_stream,
    prepare_model,
)

FAST_PATH = True
"""Open plain prepared histories without pydantic-ai's whole-history passes (``bench/history_cost.py`` turns it off to compare)."""


class PreparedMessages(list[ModelMessage]):
    """A prepared history that says what pydantic-ai would otherwise look for in it.

    It is only appended to and set by index (``PreparedHistory`` does both); the token-broken copy
    for a model (``wire``) is brought up to date with just the messages added or replaced since.
    """

    plain: bool = False
    """No retry prompts, retry feedback or model-settings deltas anywhere in it."""
    instructions: str | None = None
    """The instructions of the latest request that has any."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._wire: list[ModelMessage] = []
        self._wire_model: Model | None = None
        self._replaced: set[int] = set()

    def __setitem__(self, index: Any, value: Any) -> None:
        super().__setitem__(index, value)
        if isinstance(index, SupportsIndex) and not isinstance(index, slice):
            position = index.__index__()
            self._replaced.add(position if position >= 0 else len(self) + position)
        else:  # a slice: start over
            self._wire_model = None

    def __delitem__(self, index: Any) -> None:
        super().__delitem__(index)
        self._wire_model = None

    def insert(self, index: SupportsIndex, value: ModelMessage) -> None:
        super().insert(index, value)
        self._wire_model = None

    def pop(self, index: SupportsIndex = -1) -> ModelMessage:
        self._wire_model = None
        return super().pop(index)

    def remove(self, value: ModelMessage) -> None:
        super().remove(value)
        self._wire_model = None

    def clear(self) -> None:
        super().clear()
        self._wire_model = None

    def wire(self, model: Model, instance: Model) -> list[ModelMessage]:
        """The messages as ``instance`` (``model`` as pydantic-ai prepared it) is sent them: a new list,
        chat-template tokens broken where its profile asks for it (each message broken once, then kept)."""
        try:
            profile = instance.profile
        except NotImplementedError:  # a router prepares the messages for each model it sends them to
            profile = None
        if profile is None or not profile.get("may_tokenize_special_tokens_in_content", False):
            self._replaced.clear()
            return self.copy()
        if self._wire_model is not model or len(self._wire) > len(self):
            self._wire, self._replaced, self._wire_model = [], set(), model
        done = len(self._wire)
        for index in sorted(i for i in self._replaced if i < done):
            self._wire[index] = self._broken(instance, profile, self[index])
        self._replaced.clear()
        if done < len(self):
            self._wire.extend(
                break_special_tokens_in_messages(self[done:], profile, instance.accepts_stateless_artifacts)
            )
        return self._wire.copy()

    @staticmethod
    def _broken(instance: Model, profile: Any, message: ModelMessage) -> ModelMessage:
        return break_special_tokens_in_messages([message], profile, instance.accepts_stateless_artifacts)[0]


def open_model_stream(
    model: Model,
    messages: Sequence[ModelMessage],
    *,
    settings: ModelSettings | None,
    parameters: ModelRequestParameters,
) -> AbstractAsyncContextManager[StreamedResponse]:
    """``model_request_stream(model, messages, …)``, without whole-history passes for a plain ``PreparedMessages``."""
    if not (FAST_PATH and isinstance(messages, PreparedMessages) and messages.plain):
        return model_request_stream(
            model, list(messages), model_settings=settings, model_request_parameters=parameters
        )
    instance: Any = prepare_model(model, None)
    check_resumable(instance, messages)
    if parameters.instruction_parts is None and messages.instructions is not None:
        parameters = dataclasses.replace(
            parameters, instruction_parts=[InstructionPart(content=messages.instructions)]
        )
    return open_request_stream(instance, messages.wire(model, instance), settings, parameters)


__all__ = ["FAST_PATH", "PreparedMessages", "open_model_stream"]
