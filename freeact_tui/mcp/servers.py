"""What every MCP server of the config shares: its error, parameters, names and connection.

``connect`` starts (stdio, stderr appended to ``mcp-<name>.log``) or reaches (streamable HTTP) one
server with a fastmcp client, bounded in time; ``json_tools`` and ``ptc`` both use it. The MCP
client stack is imported inside the functions that need it: importing it costs seconds (the mcp
package pulls in its server side and jsonschema's format checker), and most runs configure no server.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freeact_tui import paths
from freeact_tui.config import McpServerConfig
from freeact_tui.paths import log_tail, mcp_log_file

if TYPE_CHECKING:
    from fastmcp import Client
    from mcp.types import CallToolResult, Tool

logger = logging.getLogger(__name__)

# Separates server and tool in the names the model sees (e.g. ``github__create_issue``).
TOOL_NAME_SEPARATOR = "__"
# Providers accept tool names of at most 64 characters out of [A-Za-z0-9_-].
_MAX_TOOL_NAME = 64
# Bounds a clean shutdown of one server (the stdio client escalates to SIGTERM/SIGKILL itself).
_CLOSE_TIMEOUT = 5.0
# Lines of a failed server's stderr quoted in its error message.
_STDERR_TAIL_LINES = 5
# Starting may take longer than a call (npx/uvx fetch packages first), so it gets at least this long.
DEFAULT_START_TIMEOUT = 30.0


class McpServerError(Exception):
    """An MCP server could not be started or listed; ``str(error)`` names the server and says why.

    Args:
        server: The server's name in the config.
        message: What went wrong, for the user.
    """

    def __init__(self, server: str, message: str) -> None:
        super().__init__(f"MCP server `{server}`: {message}")
        self.server = server
        self.message = message


def default_log_dir() -> Path:
    """Where the stderr of stdio MCP servers goes (never the terminal, which the TUI owns)."""
    return paths.data_dir() / "logs"


def server_params(config: McpServerConfig) -> dict[str, Any]:
    """The connection parameters of a server as mcpygen expects them (stdio or streamable HTTP)."""
    if config.command is not None:
        return {"command": config.command, "args": list(config.args), "env": dict(config.env)}
    # Without `type`, mcpygen guesses the transport from "/mcp" or "/sse" in the URL.
    return {"url": config.url, "headers": dict(config.headers), "type": "streamable_http"}


def config_digest(config: McpServerConfig) -> str:
    """A hash of everything that changes a server's tool list (not its timeout or mode)."""
    data = {**server_params(config), "excluded_tools": sorted(config.excluded_tools)}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def is_excluded(config: McpServerConfig, tool: str) -> bool:
    """Whether ``tool`` is in ``excluded_tools``, by its MCP name or its generated module name."""
    return tool in config.excluded_tools or _module_name(tool) in {
        _module_name(t) for t in config.excluded_tools
    }


def _module_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name).lower()  # as mcpygen names tool modules


def _describe_start_error(exc: BaseException, config: McpServerConfig, limit: float) -> str:
    chain: list[BaseException] = [exc]
    while chain[-1].__cause__ is not None and len(chain) < 10:
        chain.append(chain[-1].__cause__)
    if any(isinstance(e, FileNotFoundError) for e in chain):
        return f"command not found: {config.command}"
    if any(isinstance(e, TimeoutError) for e in chain):
        return f"no answer within {limit:g} s"
    text = str(exc) or type(exc).__name__
    return text.removeprefix("Client failed to connect: ")


async def connect(
    name: str, config: McpServerConfig, log_dir: Path | None = None, start_timeout: float | None = None
) -> Client[Any]:
    """Start (stdio) or reach (HTTP) one MCP server and complete the MCP handshake.

    Args:
        name: The server's name in the config (used in messages and the log file name).
        config: The server's settings.
        log_dir: Where a stdio server's stderr is appended (``mcp-<name>.log``).
        start_timeout: Seconds the start may take (default: the server's ``timeout``, at least
            ``DEFAULT_START_TIMEOUT``).

    Returns:
        A connected fastmcp client; close it with ``await client.close()``.

    Raises:
        McpServerError: The server did not start or answer; the message quotes its stderr.
    """
    from fastmcp import Client
    from fastmcp.client.transports import ClientTransport, StdioTransport, StreamableHttpTransport

    log: Path | None = None
    offset = 0
    transport: ClientTransport
    if config.command is not None:
        log = mcp_log_file(log_dir or default_log_dir(), name)
        try:
            log.parent.mkdir(parents=True, exist_ok=True)
            offset = log.stat().st_size if log.exists() else 0
        except OSError:
            log = None  # no log then, but never the terminal
        transport = StdioTransport(
            config.command,
            list(config.args),
            env=dict(config.env),
            keep_alive=False,
            log_file=log or Path(os.devnull),
        )
    else:
        assert config.url is not None
        try:
            transport = StreamableHttpTransport(config.url, headers=dict(config.headers))
        except ValueError as exc:
            raise McpServerError(name, f"invalid URL {config.url!r}: {exc}") from None
    limit = start_timeout if start_timeout is not None else max(config.timeout, DEFAULT_START_TIMEOUT)
    client: Client[Any] = Client(transport, name=f"freeact-tui:{name}", init_timeout=limit)
    try:
        # The handshake has its own deadline; this one also bounds spawning and HTTP connects.
        await asyncio.wait_for(client.__aenter__(), limit + 5)
    except Exception as exc:
        await close_client(client)
        message = f"failed to start: {_describe_start_error(exc, config, limit)}"
        if tail := log_tail(log, offset, _STDERR_TAIL_LINES):
            message += f"\n{tail}"
        raise McpServerError(name, message) from exc
    return client


async def list_tools(name: str, client: Client[Any], config: McpServerConfig) -> list[Tool]:
    """The server's tools minus ``excluded_tools``.

    Raises:
        McpServerError: The server did not list its tools within its timeout.
    """
    try:
        tools = await asyncio.wait_for(client.list_tools(), config.timeout)
    except Exception as exc:
        why = f"no answer within {config.timeout:g} s" if isinstance(exc, TimeoutError) else str(exc)
        raise McpServerError(name, f"cannot list tools: {why}") from exc
    return [tool for tool in tools if not is_excluded(config, tool.name)]


async def close_client(client: Client[Any]) -> None:
    """Close a client and stop its server process, bounded in time; raises only a real cancellation."""
    try:
        await asyncio.wait_for(client.close(), _CLOSE_TIMEOUT)
    except asyncio.CancelledError:
        # fastmcp re-raises the CancelledError of its own aborted connect task; only ours counts.
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
    except Exception:
        # A failed start leaves its exception in the session task, and close() raises it again.
        logger.debug("closing MCP client %s", client.name, exc_info=True)


def result_text(result: CallToolResult) -> str:
    """The text of a tool result; non-text content is described in brackets."""
    from mcp.types import (
        AudioContent,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextContent,
        TextResourceContents,
    )

    parts: list[str] = []
    for block in result.content:
        match block:
            case TextContent(text=text):
                parts.append(text)
            case ImageContent(mimeType=mime) | AudioContent(mimeType=mime):
                parts.append(f"[{mime} content omitted]")
            case EmbeddedResource(resource=TextResourceContents(text=text)):
                parts.append(text)
            case EmbeddedResource(resource=resource):
                parts.append(f"[binary resource {resource.uri}]")
            case ResourceLink(uri=uri):
                parts.append(f"[resource link {uri}]")
    if not parts and result.structuredContent is not None:
        parts.append(json.dumps(result.structuredContent, ensure_ascii=False))
    return "\n".join(parts)


def qualified_tool_name(server: str, tool: str) -> str:
    """The name the model sees for ``tool`` of ``server``: ``<server>__<tool>``, provider-safe."""
    name = paths.safe_file_name(f"{server}{TOOL_NAME_SEPARATOR}{tool}")
    if len(name) > _MAX_TOOL_NAME:
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        name = f"{name[: _MAX_TOOL_NAME - 9]}_{digest}"
    return name
