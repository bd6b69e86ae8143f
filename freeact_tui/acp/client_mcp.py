"""The MCP servers a client passes with ``session/new`` (``load``, ``resume``, ``fork``), as config entries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp.schema import HttpMcpServer, McpServerStdio

from freeact_tui.acp.errors import invalid_params
from freeact_tui.project.config import McpServerConfig


def client_mcp_servers(servers: Sequence[Any]) -> dict[str, McpServerConfig]:
    """The MCP servers a client passed, as config entries (added to the config's, by name).

    Raises:
        RequestError: an SSE server (``mcpCapabilities.sse`` is false) or an ACP-transport server.
    """
    out: dict[str, McpServerConfig] = {}
    for server in servers:
        match server:
            case McpServerStdio(name=name, command=command, args=args, env=env):
                out[name] = McpServerConfig(
                    command=command, args=list(args), env={e.name: e.value for e in env}
                )
            case HttpMcpServer(name=name, url=url, headers=headers):
                out[name] = McpServerConfig(url=url, headers={h.name: h.value for h in headers})
            case _:
                kind = getattr(server, "type", type(server).__name__)
                name = getattr(server, "name", "?")
                raise invalid_params(
                    f"MCP server {name!r}: transport {kind!r} is not supported (stdio and http are)"
                )
    return out


__all__ = ["client_mcp_servers"]
