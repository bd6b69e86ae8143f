"""MCP servers the model calls with JSON tool calls, and the connection code shared with ``mcp_ptc``.

Each ``mode="json"`` server gets a fastmcp client; its tools are offered to the model as
``<server>__<tool>``. Every call is bounded by the server's ``timeout``; a server that fails to
start, hangs or dies yields a clear message that names it, and never takes the others down.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastmcp import Client
from fastmcp.client.transports import ClientTransport, StdioTransport, StreamableHttpTransport
from mcp import McpError
from mcp.types import (
    CONNECTION_CLOSED,
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    Tool,
)
from pydantic_ai.tools import ToolDefinition

from freeact_tui import paths
from freeact_tui.config import McpServerConfig
from freeact_tui.execution.orphans import die_with_parent
from freeact_tui.paths import log_tail

logger = logging.getLogger(__name__)

# Separates server and tool in the names the model sees (e.g. ``github__create_issue``).
TOOL_NAME_SEPARATOR = "__"
# Providers accept tool names of at most 64 characters out of [A-Za-z0-9_-].
_MAX_TOOL_NAME = 64
_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")
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


def _sanitize(name: str) -> str:
    return _UNSAFE_NAME_CHARS.sub("_", name)


def _log_file(log_dir: Path, server: str) -> Path:
    return log_dir / f"mcp-{_sanitize(server)}.log"


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
    log: Path | None = None
    offset = 0
    transport: ClientTransport
    if config.command is not None:
        log = _log_file(log_dir or default_log_dir(), name)
        try:
            log.parent.mkdir(parents=True, exist_ok=True)
            offset = log.stat().st_size if log.exists() else 0
        except OSError:
            log = None  # no log then, but never the terminal
        # The server ends with the app even if the app is killed.
        command, args = die_with_parent(config.command, list(config.args))
        transport = StdioTransport(
            command,
            args,
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
    name = _sanitize(f"{server}{TOOL_NAME_SEPARATOR}{tool}")
    if len(name) > _MAX_TOOL_NAME:
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        name = f"{name[: _MAX_TOOL_NAME - 9]}_{digest}"
    return name


def _stopped_message(server: str, tool: str, why: str) -> str:
    return f"MCP server `{server}` stopped during the call of `{tool}` ({why}); it is restarted on the next call."


def _session_ended(client: Client[Any]) -> bool:
    """Whether the server went away since the last call (fastmcp keeps no public flag for it)."""
    task = getattr(getattr(client, "_session_state", None), "session_task", None)
    return isinstance(task, asyncio.Task) and task.done()


@dataclass(frozen=True)
class _JsonTool:
    server: str
    tool: Tool


class McpJsonTools:
    """The tools of all ``mode="json"`` servers, offered to the model as JSON tool calls.

    Args:
        servers: All configured servers; only enabled ``json``-mode ones are used.
        log_dir: Where stdio servers' stderr is appended (default: the user data dir's ``logs``).
        start_timeout: Seconds a server may take to start (see ``connect``).
    """

    def __init__(
        self,
        servers: dict[str, McpServerConfig],
        log_dir: Path | None = None,
        start_timeout: float | None = None,
    ) -> None:
        self._configs = {n: c for n, c in servers.items() if c.enabled and c.mode == "json"}
        self._log_dir = log_dir
        self._start_timeout = start_timeout
        self._clients: dict[str, Client[Any]] = {}
        self._locks = {name: asyncio.Lock() for name in self._configs}
        self._tools: dict[str, _JsonTool] = {}
        self._started = False
        self.errors: list[McpServerError] = []

    @property
    def servers(self) -> list[str]:
        """Names of the servers that started and listed their tools."""
        return list(self._clients)

    async def start(self) -> list[McpServerError]:
        """Start every server concurrently and list its tools.

        Returns:
            One error per server that failed (also kept in ``errors``); the others work. A second
            call before ``stop()`` changes nothing.
        """
        if self._started:
            return list(self.errors)
        self._started = True
        names = list(self._configs)
        results = await asyncio.gather(*(self._start_one(n) for n in names), return_exceptions=True)
        self.errors = []
        for name, outcome in zip(names, results, strict=True):
            if isinstance(outcome, McpServerError):
                self.errors.append(outcome)
            elif isinstance(outcome, BaseException):
                self.errors.append(McpServerError(name, f"failed to start: {outcome!r}"))
        return list(self.errors)

    async def _start_one(self, name: str) -> None:
        config = self._configs[name]
        client = await connect(name, config, self._log_dir, self._start_timeout)
        try:
            tools = await list_tools(name, client, config)
        except McpServerError:
            await close_client(client)
            raise
        self._clients[name] = client
        for tool in tools:
            qualified = qualified_tool_name(name, tool.name)
            if qualified in self._tools:
                logger.warning("MCP tool name %s is ambiguous; keeping the first", qualified)
                continue
            self._tools[qualified] = _JsonTool(name, tool)

    def tool_definitions(self) -> list[ToolDefinition]:
        """Definitions of all listed tools, named ``<server>__<tool>``."""
        return [
            ToolDefinition(
                name=qualified,
                description=f"[MCP server `{entry.server}`] {entry.tool.description or entry.tool.name}",
                parameters_json_schema=entry.tool.inputSchema or {"type": "object", "properties": {}},
            )
            for qualified, entry in self._tools.items()
        ]

    def owns(self, name: str) -> bool:
        """Whether ``name`` is one of these tools (for dispatching a model's tool call)."""
        return name in self._tools

    async def call(self, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        """Call a tool by its qualified name; never raises.

        Args:
            name: A name from ``tool_definitions()``.
            args: The JSON arguments the model gave.

        Returns:
            The result text and whether it is an error (unknown tool, timeout, server failure, or
            an error the tool reported).
        """
        entry = self._tools.get(name)
        if entry is None:
            return f"Unknown MCP tool `{name}`.", True
        server, tool = entry.server, entry.tool.name
        config = self._configs[server]
        try:
            client = await self._client(server)
        except McpServerError as exc:
            return str(exc), True
        try:
            result = await asyncio.wait_for(client.call_tool_mcp(tool, args), config.timeout)
        except TimeoutError:
            return (
                f"MCP server `{server}`: tool `{tool}` did not answer within {config.timeout:g} s; "
                "the call was abandoned.",
                True,
            )
        except McpError as exc:
            if exc.error.code != CONNECTION_CLOSED:
                return f"MCP server `{server}`: tool `{tool}` failed: {exc.error.message}", True
            await self._drop(server, client)
            return _stopped_message(server, tool, exc.error.message), True
        except Exception as exc:
            # The session is broken (the process died or the connection dropped): start afresh next time.
            await self._drop(server, client)
            return _stopped_message(server, tool, str(exc) or type(exc).__name__), True
        text = result_text(result)
        if result.isError:
            return f"Tool `{tool}` of MCP server `{server}` reported an error: {text or '(no message)'}", True
        return text or "(no output)", False

    async def _client(self, server: str) -> Client[Any]:
        async with self._locks[server]:
            client = self._clients.get(server)
            if client is not None and client.is_connected() and not _session_ended(client):
                return client
            if client is not None:
                await self._drop(server, client)
            client = await connect(server, self._configs[server], self._log_dir, self._start_timeout)
            self._clients[server] = client
            return client

    async def _drop(self, server: str, client: Client[Any]) -> None:
        if self._clients.get(server) is client:
            del self._clients[server]
        await close_client(client)

    async def stop(self) -> None:
        """Close every client and stop every server process started here."""
        clients, self._clients = list(self._clients.values()), {}
        self._tools.clear()
        self._started = False
        await asyncio.gather(*(close_client(c) for c in clients))

    async def __aenter__(self) -> McpJsonTools:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
