"""Text that can be encoded: a lone UTF-16 surrogate (``"\\ud800"``, valid in JSON and in a Python ``str``,
never in UTF-8) made U+FFFD wherever it sits in a message, before anything is sent on.

A model's reply, a tool-call id or name, a kernel's output or a client's buffer can carry one; stored in
the history, it made every later request fail to encode ("Internal error: UnicodeEncodeError ...
surrogates not allowed") and the session unusable, resumed or forked. The history keeps what came; what
is sent to the model (``agent.context.window.PreparedHistory``, ``agent.cancels.as_sent``) and to an ACP
client (``acp.wire``) passes through ``encodable``.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TypeVar, cast

T = TypeVar("T")

_SURROGATE = re.compile("[\ud800-\udfff]")


def encodable_text(text: str) -> str:
    """``text`` with every lone surrogate made U+FFFD (the same object when it has none)."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def encodable(value: T) -> T:
    """``value`` (strings, lists, tuples, dicts, dataclasses such as pydantic-ai's messages and parts, to
    any depth) with every string made ``encodable_text``; the same object wherever nothing changed."""
    return cast(T, _clean(value))


def _clean(value: object) -> object:
    if isinstance(value, str):
        return encodable_text(value)
    if isinstance(value, list | tuple):
        items = [_clean(v) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return type(value)(items) if isinstance(value, tuple) else items
    if isinstance(value, dict):
        pairs = [(_clean(k), _clean(v)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(pairs, value.items(), strict=True)):
            return value
        return dict(pairs)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changed = {}
        for field in dataclasses.fields(value):
            if not field.init:
                continue
            old = getattr(value, field.name)
            new = _clean(old)
            if new is not old:
                changed[field.name] = new
        return dataclasses.replace(value, **changed) if changed else value
    return value


__all__ = ["encodable", "encodable_text"]
