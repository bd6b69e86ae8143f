"""What every MCP server of the config shares: its error, parameters, names and connection.

``connect`` starts (stdio, stderr appended to ``mcp-<name>.log``) or reaches (streamable HTTP) one
server, bounded in time, with the same ``McpSession`` the kernel's tool server uses (one MCP client
library for the whole app); ``json_tools`` and ``ptc`` both use it. The MCP
client stack is imported inside the functions that need it: importing it costs seconds (the mcp
package pulls in its server side and jsonschema's format checker), and most runs configure no server.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freeact_tui.project import paths
from freeact_tui.project.config import McpServerConfig
from freeact_tui.project.paths import log_tail, mcp_log_file

if TYPE_CHECKING:
    from mcp.types import CallToolResult, Tool

    from freeact_tui.execution.tools.mcp_session import McpSession

logger = logging.getLogger(__name__)

# Separates server and tool in the names the model sees, as in freeact (``github_create_issue``).
TOOL_NAME_SEPARATOR = "_"
# What separated them in sessions of freeact-tui before 0.x (``github__create_issue``): still resolved.
LEGACY_TOOL_NAME_SEPARATOR = "__"
# Providers accept tool names of at most 64 characters out of [A-Za-z0-9_-].
_MAX_TOOL_NAME = 64
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
    causes = _causes(exc)
    if any(isinstance(e, FileNotFoundError) for e in causes):
        return f"command not found: {config.command}"
    if any(isinstance(e, TimeoutError) for e in causes):
        return f"no answer within {limit:g} s"
    # anyio wraps the real failure in exception groups: name the innermost one.
    leaf = next((e for e in reversed(causes) if not isinstance(e, BaseExceptionGroup)), exc)
    return str(leaf) or type(leaf).__name__


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc``, its causes and the members of exception groups among them (bounded)."""
    seen: list[BaseException] = []
    todo = [exc]
    while todo and len(seen) < 20:
        current = todo.pop(0)
        if any(current is e for e in seen):
            continue
        seen.append(current)
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
        if current.__cause__ is not None:
            todo.append(current.__cause__)
    return seen


async def connect(
    name: str, config: McpServerConfig, log_dir: Path | None = None, start_timeout: float | None = None
) -> McpSession:
    """Start (stdio) or reach (HTTP) one MCP server and complete the MCP handshake.

    Args:
        name: The server's name in the config (used in messages and the log file name).
        config: The server's settings (``${VAR}`` in them is taken from the environment).
        log_dir: Where a stdio server's stderr is appended (``mcp-<name>.log``).
        start_timeout: Seconds the start may take (default: the server's ``timeout``, at least
            ``DEFAULT_START_TIMEOUT``).

    Returns:
        A connected session; close it with ``close_client``.

    Raises:
        McpServerError: The server did not start or answer; the message quotes its stderr.
    """
    from freeact_tui.execution.tools.mcp_session import McpSession

    log_dir = log_dir or default_log_dir()
    log: Path | None = None
    offset = 0
    if config.command is not None:
        log = mcp_log_file(log_dir, name)
        with contextlib.suppress(OSError):
            offset = log.stat().st_size if log.exists() else 0
    limit = start_timeout if start_timeout is not None else max(config.timeout, DEFAULT_START_TIMEOUT)
    session = McpSession(name, server_params(config), log_dir)
    try:
        # Bounds the handshake, and with a margin also spawning and HTTP connects.
        await session.start(limit)
    except Exception as exc:
        message = f"failed to start: {_describe_start_error(exc, config, limit)}"
        if tail := log_tail(log, offset, _STDERR_TAIL_LINES):
            message += f"\n{tail}"
        raise McpServerError(name, message) from exc
    return session


async def list_tools(name: str, session: McpSession, config: McpServerConfig) -> list[Tool]:
    """The server's tools minus ``excluded_tools``.

    Raises:
        McpServerError: The server did not list its tools within its timeout.
    """
    try:
        tools = await session.list_tools(config.timeout)
    except Exception as exc:
        why = f"no answer within {config.timeout:g} s" if isinstance(exc, TimeoutError) else str(exc)
        raise McpServerError(name, f"cannot list tools: {why}") from exc
    return [tool for tool in tools if not is_excluded(config, tool.name)]


async def close_client(session: McpSession) -> None:
    """Close a session and stop its server process, bounded in time; raises only a real cancellation."""
    try:
        await session.close()
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
    except Exception:
        logger.debug("closing MCP session %s", session.name, exc_info=True)


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


def qualified_tool_name(server: str, tool: str, separator: str = TOOL_NAME_SEPARATOR) -> str:
    """The name the model sees for ``tool`` of ``server``: ``<server>_<tool>`` (freeact's), provider-safe."""
    name = paths.safe_file_name(f"{server}{separator}{tool}")
    if len(name) > _MAX_TOOL_NAME:
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        name = f"{name[: _MAX_TOOL_NAME - 9]}_{digest}"
    return name
