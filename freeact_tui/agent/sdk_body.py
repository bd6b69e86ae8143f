"""Model requests without the provider SDK's per-request walk of the whole conversation.

The openai SDK runs a client-side transform (``async_maybe_transform``) over a request's body before
it sends it: every message, every part and every key is checked against the params' TypedDict graph
with typing introspection. That costs about 0.17 ms a message on the event loop for chat completions
(0.35 ms for the Responses API): a 10,000-message session blocks the app for 1.7 s per request, 100
messages for 17 ms. For the conversation it changes nothing: the message params have no aliases or
formats, and pydantic-ai builds them as plain dicts. The SDK merges ``extra_body`` into the JSON body
after the transform, so the conversation moved there (an empty list left in its place: the argument
is required, and its key keeps its position) goes out as the same bytes, unwalked. The same
workaround is used elsewhere (anthropic-sdk-python#1195, litellm#29769). The anthropic SDK's
transform of the same history measured no slower than the rest of its request (2,000 messages:
~32 ms with or without), so Anthropic models are left as they are.

Public interface: ``without_sdk_walk(model)`` installs this on the client of an OpenAI chat or
Responses model (other models are returned as they are); ``move_payload(kwargs, key)`` is the
rewrite of one call's arguments.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from pydantic_ai.models import Model

_MARK = "_freeact_tui_without_sdk_walk"

# module of the model class, its name, the client's resource (attribute path) and the argument with the conversation
_ROUTES = (
    ("pydantic_ai.models.openai", "OpenAIChatModel", ("chat", "completions"), "messages"),
    ("pydantic_ai.models.openai", "OpenAIResponsesModel", ("responses",), "input"),
)


def move_payload(kwargs: dict[str, Any], key: str) -> dict[str, Any]:
    """The arguments of one ``create`` call with ``kwargs[key]`` (the conversation) in ``extra_body``.

    Only a list of plain dicts is moved (anything else, e.g. pydantic models the transform would
    dump, stays on the SDK's path), and never over an ``extra_body`` that has ``key`` itself.
    """
    payload = kwargs.get(key)
    extra = kwargs.get("extra_body")
    if type(payload) is not list or not payload:
        return kwargs
    if extra is not None and (not isinstance(extra, dict) or key in extra):
        return kwargs
    if not all(type(item) is dict for item in payload):
        return kwargs
    return {**kwargs, key: [], "extra_body": {**(extra or {}), key: payload}}


def _light(
    create: Callable[..., Coroutine[Any, Any, Any]], key: str
) -> Callable[..., Coroutine[Any, Any, Any]]:
    @functools.wraps(create)
    async def create_without_walk(*args: Any, **kwargs: Any) -> Any:
        return await create(*args, **move_payload(kwargs, key))

    setattr(create_without_walk, _MARK, True)
    return create_without_walk


def without_sdk_walk(model: Model) -> Model:
    """``model``, its SDK client's ``create`` sending the conversation unwalked (this client only)."""
    for module_name, class_name, path, key in _ROUTES:
        module = sys.modules.get(module_name)  # not imported: not such a model (and nothing is imported here)
        cls = getattr(module, class_name, None) if module is not None else None
        if cls is None or not isinstance(model, cls):
            continue
        resource: Any = getattr(model, "client", None)
        for name in path:
            resource = getattr(resource, name, None)
        create = getattr(resource, "create", None)
        if create is not None and not getattr(create, _MARK, False):
            resource.create = _light(create, key)  # an instance attribute: shadows the method for this client
        break
    return model


__all__ = ["move_payload", "without_sdk_walk"]
