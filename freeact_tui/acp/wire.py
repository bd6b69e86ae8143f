"""The one decode and the one encode of the protocol's JSON, and the one cleaning of client text.

What a client sends is taken only as far as it can be held and sent back: a line is decoded by
``decode_line`` (plain JSON only: no ``NaN``/``Infinity``, no number out of the float range, at most
``MAX_DEPTH`` levels of nesting; any failure is a ``WireError`` with its JSON-RPC code, never an
exception that ends the connection), and every string in it is made valid Unicode by ``client_text``
(a lone UTF-16 surrogate, which JSON's ``\\ud800`` escape can carry but UTF-8 cannot, becomes U+FFFD),
so no client string that reaches a session's history, a file or an answer can fail to encode later.
``decode_message`` adds the one envelope check of JSON-RPC 2.0 (``message_of``): ``"jsonrpc": "2.0"``, an
``id`` that is a string, an integer or null, a string ``method``; a request that fails it is an Invalid
Request (-32600, answered with ``id: null``). A client's answer to one of our requests that fails it but
carries a readable id becomes an error answer to that request, so the request fails at once instead of
waiting for an answer that will never be valid.
``encode_message`` never emits anything but one line of JSON: what cannot be encoded as it is (a lone
surrogate, a non-finite number from anywhere in the process) is cleaned the same way, not dropped.
"""

from __future__ import annotations

import json
import logging
import math
import re
from typing import Any

logger = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
MAX_DEPTH = 100
"""The deepest nesting of a message (ACP's own messages need a handful of levels)."""

_SURROGATE = re.compile("[\ud800-\udfff]")


class WireError(ValueError):
    """A line that is not a message this server can take, with the JSON-RPC error code to answer."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def client_text(text: str) -> str:
    """``text`` as valid Unicode: each lone surrogate becomes U+FFFD (everything else is kept)."""
    if text.isascii():
        return text
    return _SURROGATE.sub("\ufffd", text)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number out of range: {text[:40]}")
    return value


def _clean(value: Any, depth: int) -> Any:
    """``value`` with valid strings and finite numbers; deeper than ``MAX_DEPTH``: a ``WireError``."""
    if depth > MAX_DEPTH:
        raise WireError(INVALID_REQUEST, f"Invalid Request: nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        return client_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {client_text(k): _clean(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v, depth + 1) for v in value]
    return value


def decode_line(line: bytes) -> Any:
    """One line of the protocol as JSON, its strings valid Unicode.

    Raises:
        WireError: not JSON (-32700: bad bytes, bad syntax, ``NaN``, a number out of range, nesting too
            deep for the parser) or nested deeper than ``MAX_DEPTH`` (-32600).
    """
    try:
        text = line.decode("utf-8")
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite)
    except RecursionError:
        raise WireError(PARSE_ERROR, "Parse error: nested too deep") from None
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise WireError(PARSE_ERROR, f"Parse error: {str(exc)[:200]}") from None
    cleaned = _clean(value, 0)
    if isinstance(value, dict) and isinstance(value.get("id"), str):
        cleaned["id"] = value["id"]  # an id is echoed exactly (``encode_message``), never made another one
    return cleaned


def _valid_id(value: Any) -> bool:
    """JSON-RPC 2.0: an id is a string, an integer or null (never a boolean, a fraction, an array or an object)."""
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _integral_float(value: Any) -> bool:
    """A number with a fraction part of zero (``0.0``, ``7e0``): the same number as an id of ours."""
    return isinstance(value, float) and value.is_integer()


def _answer_fault(message: dict[str, Any]) -> str | None:
    """Why ``message`` (no ``method``: an answer) is not a valid JSON-RPC 2.0 response, or ``None``."""
    if message.get("jsonrpc") != "2.0":
        return '`jsonrpc` must be "2.0"'
    if ("result" in message) == ("error" in message):
        return "a response has exactly one of `result` and `error`"
    error = message.get("error", {"code": 0, "message": ""})
    code = error.get("code") if isinstance(error, dict) else None
    if not isinstance(code, int) or isinstance(code, bool) or not isinstance(error.get("message"), str):
        return "`error` must be an object with an integer `code` and a string `message`"
    return None


def _invalid(why: str) -> WireError:
    return WireError(INVALID_REQUEST, f"Invalid Request: {why}")


def message_of(value: Any) -> dict[str, Any]:
    """``value`` (a decoded line) as a JSON-RPC 2.0 message: the one envelope check.

    A request or notification is returned as it is; so is a valid answer. An answer with a readable,
    non-null id that is not a valid response comes back as an error answer to that id (the request it
    answers fails at once, with the fault in its message).

    Raises:
        WireError: -32600, not a JSON-RPC 2.0 message (not an object; ``jsonrpc`` not ``"2.0"``; an ``id``
            that is not a string, an integer or null; a ``method`` that is not a string; neither
            ``method`` nor ``id``; an answer with ``id: null`` that is not a valid response).
    """
    if not isinstance(value, dict) or not ("method" in value or "id" in value):
        raise _invalid("not a JSON-RPC 2.0 message")
    if "method" not in value and _integral_float(value.get("id")):
        # an answer to one of our requests (our ids are integers) spelled ``0.0``: that request fails at once
        # (an answer to no request of ours is dropped as any unknown answer is), instead of waiting its bound
        logger.warning("the client answered request %r with the id %r: it fails", int(value["id"]), value["id"])
        message = "Invalid response from the client: `id` must be an integer, not a fraction"
        return {"jsonrpc": "2.0", "id": int(value["id"]), "error": {"code": INVALID_REQUEST, "message": message}}
    if "id" in value and not _valid_id(value["id"]):
        raise _invalid("`id` must be a string, an integer or null")
    if "method" not in value:
        fault = _answer_fault(value)
        if fault is None:
            return value
        if value["id"] is None:
            raise _invalid(fault)
        logger.warning(
            "the client's answer to request %r is not a valid response (%s): it fails", value["id"], fault
        )
        message = f"Invalid response from the client: {fault}"
        return {"jsonrpc": "2.0", "id": value["id"], "error": {"code": INVALID_REQUEST, "message": message}}
    if value.get("jsonrpc") != "2.0":
        raise _invalid('`jsonrpc` must be "2.0"')
    if not isinstance(value["method"], str):
        raise _invalid("`method` must be a string")
    return value


def decode_message(line: bytes) -> dict[str, Any]:
    """One line of the protocol as a JSON-RPC 2.0 message (``decode_line``, then ``message_of``).

    Raises:
        WireError: what ``decode_line`` or ``message_of`` raise.
    """
    return message_of(decode_line(line))


def encode_message(message: dict[str, Any]) -> bytes:
    """``message`` as one line of JSON (UTF-8, newline-terminated), whatever strings or numbers it holds."""
    try:
        text = json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        return (text + "\n").encode("utf-8")
    except (ValueError, RecursionError):  # a lone surrogate (UnicodeEncodeError), NaN, nesting: clean it
        pass
    try:
        cleaned = _clean(message, -(10**6))  # what we send is not bounded by the client's depth
    except RecursionError:
        cleaned = {k: message[k] for k in ("jsonrpc", "id") if k in message}
        cleaned["error"] = {"code": -32603, "message": "Internal error: the answer could not be encoded"}
    if isinstance(message.get("id"), str):
        cleaned["id"] = message["id"]  # the client's id exactly (a lone surrogate escaped as it came: ASCII)
    return (json.dumps(cleaned, separators=(",", ":"), ensure_ascii=True, allow_nan=False) + "\n").encode()


__all__ = [
    "INVALID_REQUEST",
    "MAX_DEPTH",
    "PARSE_ERROR",
    "WireError",
    "client_text",
    "decode_line",
    "decode_message",
    "encode_message",
    "message_of",
]
