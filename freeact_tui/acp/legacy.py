"""What a client sends, read as the current protocol means it (one place, applied to every message).

Methods of older ACP clients, read as the current ones they stand for (one table): Gemini CLI's and
Zed's earlier ``session/set_model`` is ``session/set_config_option`` of the ``model`` option (the SDK
no longer routes it). Its answer is the newer method's (a superset of the empty result it expects).
A notification sent as a request is applied and answered ``{}``; a client's answer with both a result
and an error is an error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from acp.schema import CancelNotification
from pydantic import BaseModel, ValidationError

from freeact_tui.acp.dispatch import one_line
from freeact_tui.acp.handshake import initialize_problem, refusal
from freeact_tui.acp.model_option import MODEL_OPTION
from freeact_tui.acp.stdio import Rewritten


def _set_model(params: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in params.items() if k != "modelId"}
    return {**out, "configId": MODEL_OPTION, "value": params.get("modelId")}


LEGACY_METHODS: dict[str, tuple[str, Callable[[dict[str, Any]], dict[str, Any]]]] = {
    "session/set_model": ("session/set_config_option", _set_model),
}


NOTIFICATIONS: dict[str, type[BaseModel]] = {"session/cancel": CancelNotification}
"""Methods that are notifications, with the schema of their params: sent as a request (with an id) they
are checked as every request is (params that do not validate: -32602, and nothing is applied), then
applied and answered ``{}`` at once (ACP's ``session/cancel`` is a notification; a client that waits for
an answer gets one)."""


def _answer(message: dict[str, Any]) -> dict[str, Any]:
    """A client's answer to one of the server's requests, read as JSON-RPC means it: one with both a
    ``result`` and an ``error`` (which JSON-RPC forbids) is an error, never taken as a success; an id
    written as a string of digits is the number the server sent (its requests' ids are numbers)."""
    out = dict(message)
    if "result" in out and "error" in out:
        del out["result"]
    ident = out.get("id")
    if isinstance(ident, str) and ident.isascii() and ident.isdigit() and len(ident) < 20:
        out["id"] = int(ident)
    return out


def upgrade(message: dict[str, Any]) -> Rewritten:
    """``message`` as the current method when it is a legacy one (its id kept; params that are not an
    object are left for the current method to refuse as invalid params), else as it is."""
    if "method" not in message:
        return Rewritten(_answer(message))
    method = message.get("method")
    problem = initialize_problem(message.get("params")) if method == "initialize" else None
    if problem is not None:  # the SDK would drop the bad capabilities without a word: refused here
        return Rewritten(None, refusal(message.get("id"), problem)) if "id" in message else Rewritten(None)
    if isinstance(method, str) and method in NOTIFICATIONS and "id" in message:
        try:
            NOTIFICATIONS[method].model_validate(message.get("params"))
        except ValidationError as exc:
            return Rewritten(None, refusal(message["id"], one_line(exc)))
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
        return Rewritten({k: v for k, v in message.items() if k != "id"}, answer)
    legacy = LEGACY_METHODS.get(method) if isinstance(method, str) else None
    if legacy is None:
        return Rewritten(message)
    current, params = legacy
    given = message.get("params")
    return Rewritten(
        {**message, "method": current, "params": params(given) if isinstance(given, dict) else given}
    )


__all__ = ["LEGACY_METHODS", "NOTIFICATIONS", "upgrade"]
