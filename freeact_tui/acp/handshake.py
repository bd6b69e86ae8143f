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
    return {"jsonrpc": "2.0", "id": message["id"], "result": initialize_result(version)}


__all__ = ["AGENT_CAPABILITIES", "AGENT_INFO", "PROTOCOL_VERSION", "early_answer", "initialize_result"]
