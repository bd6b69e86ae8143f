"""Chat-completions requests without the openai SDK's per-request walk of the whole conversation.

``AsyncCompletions.create`` runs the SDK's client-side transform (``async_maybe_transform``) over the
request body before it sends it: every message, every part and every key is checked against the
params' TypedDict graph with typing introspection. That costs about 0.17 ms a message on the event
loop (a 10,000-message session: 1.7 s per request, during which the app does not respond; 100
messages: 17 ms). For chat messages it changes nothing: their params have no aliases or formats, and
pydantic-ai builds them as plain dicts. The SDK merges ``extra_body`` into the JSON body after the
transform, so ``messages`` moved there (an empty list left in its place: the argument is required,
and its key keeps its position) go out as the same bytes, unwalked. The same workaround is used
elsewhere (anthropic-sdk-python#1195, litellm#29769).

Public interface: ``without_sdk_walk(model)`` installs this on an OpenAI chat model's client (other
models are returned as they are); ``move_messages(kwargs)`` is the rewrite of one call's arguments.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from pydantic_ai.models import Model

_MARK = "_freeact_tui_without_sdk_walk"


def move_messages(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The arguments of one ``chat.completions.create`` call with the messages in ``extra_body``.

    Only a list of plain dicts is moved (anything else, e.g. pydantic models the transform would
    dump, stays on the SDK's path), and never over an ``extra_body`` that has ``messages`` itself.
    """
    messages = kwargs.get("messages")
    extra = kwargs.get("extra_body")
    if type(messages) is not list or not messages:
        return kwargs
    if extra is not None and (not isinstance(extra, dict) or "messages" in extra):
        return kwargs
    if not all(type(m) is dict for m in messages):
        return kwargs
    return {**kwargs, "messages": [], "extra_body": {**(extra or {}), "messages": messages}}


def _light(create: Callable[..., Coroutine[Any, Any, Any]]) -> Callable[..., Coroutine[Any, Any, Any]]:
    @functools.wraps(create)
    async def create_without_walk(*args: Any, **kwargs: Any) -> Any:
        return await create(*args, **move_messages(kwargs))

    return create_without_walk


def without_sdk_walk(model: Model) -> Model:
    """``model`` with its OpenAI client's ``chat.completions.create`` sending the messages unwalked."""
    chat_models = sys.modules.get(
        "pydantic_ai.models.openai"
    )  # not imported: not an OpenAI model (no import here)
    if chat_models is None or not isinstance(model, chat_models.OpenAIChatModel):
        return model
    completions = getattr(getattr(model.client, "chat", None), "completions", None)
    create = getattr(completions, "create", None)
    if completions is None or create is None or getattr(completions, _MARK, False):
        return model
    completions.create = _light(create)  # this client only (the instance attribute shadows the method)
    setattr(completions, _MARK, True)
    return model


__all__ = ["move_messages", "without_sdk_walk"]
