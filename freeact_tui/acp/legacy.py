"""Methods of older ACP clients, read as the current ones they stand for (one table): Gemini CLI's and
Zed's earlier ``session/set_model`` is ``session/set_config_option`` of the ``model`` option (the SDK
no longer routes it). Its answer is the newer method's (a superset of the empty result it expects)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from freeact_tui.acp.model_option import MODEL_OPTION


def _set_model(params: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in params.items() if k != "modelId"}
    return {**out, "configId": MODEL_OPTION, "value": params.get("modelId")}


LEGACY_METHODS: dict[str, tuple[str, Callable[[dict[str, Any]], dict[str, Any]]]] = {
    "session/set_model": ("session/set_config_option", _set_model),
}


def upgrade(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` as the current method when it is a legacy one (its id kept), else as it is."""
    legacy = LEGACY_METHODS.get(message.get("method", "")) if isinstance(message.get("method"), str) else None
    if legacy is None or not isinstance(message.get("params"), dict):
        return message
    method, params = legacy
    return {**message, "method": method, "params": params(message["params"])}


__all__ = ["LEGACY_METHODS", "upgrade"]
