"""``initialize`` answered as soon as the process can read it, before the heavy modules are imported (the
SDK's schema, pydantic-ai, the agent), as the app draws its first frame before it loads the agent.

The answer is data: ``initialize_result`` builds the same object ``FreeactAcpAgent.initialize`` returns
through the SDK's types (a test holds the two equal), from the standard library alone. Anything that is
not a well-formed ``initialize`` request is left to the SDK's connection."""

from __future__ import annotations

from typing import Any

from freeact_tui.version import __version__

PROTOCOL_VERSION = 1
"""The ACP protocol version this agent speaks (``acp.PROTOCOL_VERSION`` of the pinned SDK)."""

AGENT_CAPABILITIES: dict[str, Any] = {
    "loadSession": True,
    "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
    "mcpCapabilities": {"http": True, "sse": False},
    "sessionCapabilities": {"list": {}, "close": {}, "resume": {}, "fork": {}},
}
AGENT_INFO = {"name": "freeact-tui", "title": "freeact-tui", "version": __version__}


def initialize_result(protocol_version: int) -> dict[str, Any]:
    """The ``initialize`` result (as JSON) for a client speaking ``protocol_version``."""
    return {
        "protocolVersion": min(protocol_version, PROTOCOL_VERSION),
        "agentCapabilities": AGENT_CAPABILITIES,
        "agentInfo": AGENT_INFO,
        "authMethods": [],
    }


def early_answer(message: dict[str, Any] | None) -> dict[str, Any] | None:
    """The JSON-RPC response to ``message`` when it is a well-formed ``initialize`` request, else ``None``."""
    if message is None or message.get("method") != "initialize" or "id" not in message:
        return None
    params = message.get("params")
    version = params.get("protocolVersion") if isinstance(params, dict) else None
    if not isinstance(version, int) or isinstance(version, bool) or not 0 <= version <= 65535:
        return None  # the SDK's validation says what is wrong
    problem = initialize_problem(params)
    if problem is not None:
        return refusal(message["id"], problem)
    if not _plainly_valid(params):
        return None  # the SDK's validation decides
    return {"jsonrpc": "2.0", "id": message["id"], "result": initialize_result(version)}


def refusal(ident: Any, problem: str) -> dict[str, Any]:
    """The invalid-params answer (-32602) to an ``initialize`` with ``problem``."""
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32602, "message": f"Invalid params: {problem}"}}


_TYPES: dict[tuple[str, ...], type] = {
    ("clientCapabilities",): dict,
    ("clientCapabilities", "fs"): dict,
    ("clientCapabilities", "fs", "readTextFile"): bool,
    ("clientCapabilities", "fs", "writeTextFile"): bool,
    ("clientCapabilities", "terminal"): bool,
    ("clientInfo",): dict,
    ("clientInfo", "name"): str,
    ("clientInfo", "version"): str,
}
"""The ``initialize`` fields whose wrong values the SDK's schema replaces by its defaults without a word
(a client would believe it offered files or a terminal that the agent then never uses)."""


def initialize_problem(params: Any) -> str | None:
    """What is wrong in ``initialize`` params that the SDK would silently drop, or ``None``."""
    if not isinstance(params, dict):
        return None
    for path, kind in _TYPES.items():
        value: Any = params
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if value is not None and not _is(value, kind):
            return f"`{'.'.join(path)}` must be {'an object' if kind is dict else f'a {kind.__name__}'}"
    return None


def _is(value: Any, kind: type) -> bool:
    return value is None or (isinstance(value, kind) and not (kind is int and isinstance(value, bool)))


def _shaped(value: Any, fields: dict[str, type]) -> bool:
    """``value`` is ``None`` or an object of only ``fields`` (``_meta`` aside), each of its type or null."""
    if value is None:
        return True
    if not isinstance(value, dict) or not _is(value.get("_meta"), dict):
        return False
    return all(key in fields and _is(v, fields[key]) for key, v in value.items() if key != "_meta")


def _plainly_valid(params: Any) -> bool:
    """Params the SDK's schema certainly takes: only the fields the common clients send, of their types
    (anything else, valid or not, goes to the SDK's own validation, which answers a bit later)."""
    if not _shaped(params, {"protocolVersion": int, "clientCapabilities": dict, "clientInfo": dict}):
        return False
    capabilities = params.get("clientCapabilities")
    info = params.get("clientInfo")
    fs = capabilities.get("fs") if isinstance(capabilities, dict) else None
    return (
        _shaped(capabilities, {"fs": dict, "terminal": bool})
        and _shaped(fs, {"readTextFile": bool, "writeTextFile": bool})
        and _shaped(info, {"name": str, "title": str, "version": str})
        and (info is None or (isinstance(info.get("name"), str) and isinstance(info.get("version"), str)))
    )


__all__ = [
    "AGENT_CAPABILITIES",
    "AGENT_INFO",
    "PROTOCOL_VERSION",
    "early_answer",
    "initialize_problem",
    "initialize_result",
    "refusal",
]
