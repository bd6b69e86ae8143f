"""The MCP servers a client passes with ``session/new`` (``load``, ``resume``, ``fork``), as config entries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp.schema import HttpMcpServer, McpServerStdio

from freeact_tui.acp.errors import invalid_params
from freeact_tui.project.config import McpServerConfig
from freeact_tui.text.safe import one_line


def client_mcp_servers(servers: Sequence[Any]) -> dict[str, McpServerConfig]:
    """The MCP servers a client passed, as config entries (added to the config's, by name).

    Raises:
        RequestError: an SSE server (``mcpCapabilities.sse`` is false) or an ACP-transport server.
    """
    out: dict[str, McpServerConfig] = {}
    for server in servers:
        try:
            entry = _entry(server)
        except ValueError as exc:  # the config's own check refused it (pydantic's ValidationError)
            name = getattr(server, "name", "?")
            reason = one_line(str(exc).replace("\n", "; "), 300)
            raise invalid_params(f"MCP server {name!r} cannot be used: {reason}") from None
        out[getattr(server, "name", "")] = entry
    return out


def _entry(server: Any) -> McpServerConfig:
    """One server a client passed as a config entry (the config's checks raise ``ValueError``)."""
    match server:
        case McpServerStdio(command=command, args=args, env=env):
            return McpServerConfig(command=command, args=list(args), env={e.name: e.value for e in env})
        case HttpMcpServer(url=url, headers=headers):
            return McpServerConfig(url=url, headers={h.name: h.value for h in headers})
    kind = getattr(server, "type", type(server).__name__)
    name = getattr(server, "name", "?")
    raise invalid_params(f"MCP server {name!r}: transport {kind!r} is not supported (stdio and http are)")


__all__ = ["client_mcp_servers"]
