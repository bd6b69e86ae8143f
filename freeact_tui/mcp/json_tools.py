"""MCP servers the model calls with JSON tools: offered as ``<server>_<tool>``, as freeact names them.

A call by the name older sessions of freeact-tui used (``<server>__<tool>``) still reaches its tool.

Each ``mode="json"`` server gets an ``McpSession`` (``servers.connect``). Every call is bounded by the
server's ``timeout``; a server that fails to start, hangs or dies yields a clear message that names
it, is restarted on the next call, and never takes the others down.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_ai.tools import ToolDefinition

from freeact_tui.mcp.servers import (
    LEGACY_TOOL_NAME_SEPARATOR,
    McpServerError,
    close_client,
    connect,
    list_tools,
    qualified_tool_name,
    result_text,
)
from freeact_tui.project.config import McpServerConfig

if TYPE_CHECKING:
    from mcp.types import Tool

    from freeact_tui.execution.tools.mcp_session import McpSession

logger = logging.getLogger(__name__)


def _stopped_message(server: str, tool: str, why: str) -> str:
    return f"MCP server `{server}` stopped during the call of `{tool}` ({why}); it is restarted on the next call."


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
        self._clients: dict[str, McpSession] = {}
        self._locks = {name: asyncio.Lock() for name in self._configs}
        self._tools: dict[str, _JsonTool] = {}
        self._legacy: dict[str, str] = {}  # ``server__tool`` → ``server_tool``
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
            self._legacy.setdefault(
                qualified_tool_name(name, tool.name, LEGACY_TOOL_NAME_SEPARATOR), qualified
            )

    def tool_definitions(self) -> list[ToolDefinition]:
        """Definitions of all listed tools, named ``<server>_<tool>``."""
        return [
            ToolDefinition(
                name=qualified,
                description=f"[MCP server `{entry.server}`] {entry.tool.description or entry.tool.name}",
                parameters_json_schema=entry.tool.inputSchema or {"type": "object", "properties": {}},
            )
            for qualified, entry in self._tools.items()
        ]

    def tools_of(self, server: str) -> list[str]:
        """The tools listed for ``server``, named as the model sees them (none: not started or failed)."""
        return [qualified for qualified, entry in self._tools.items() if entry.server == server]

    @property
    def tool_names(self) -> list[str]:
        """The names of all listed tools, as the model sees them."""
        return list(self._tools)

    def canonical_name(self, name: str) -> str:
        """``name`` as offered now: an older session's ``server__tool`` becomes ``server_tool``."""
        return name if name in self._tools else self._legacy.get(name, name)

    def owns(self, name: str) -> bool:
        """Whether ``name`` is one of these tools (for dispatching a model's tool call)."""
        return self.canonical_name(name) in self._tools

    async def call(self, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        """Call a tool by its qualified name; never raises.

        Args:
            name: A name from ``tool_definitions()``.
            args: The JSON arguments the model gave.

        Returns:
            The result text and whether it is an error (unknown tool, timeout, server failure, or
            an error the tool reported).
        """
        from mcp import McpError
        from mcp.types import CONNECTION_CLOSED

        entry = self._tools.get(self.canonical_name(name))
        if entry is None:
            return f"Unknown MCP tool `{name}`.", True
        server, tool = entry.server, entry.tool.name
        config = self._configs[server]
        try:
            client = await self._client(server)
        except McpServerError as exc:
            return str(exc), True
        try:
            result = await client.call_tool(tool, args, config.timeout)
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

    async def _client(self, server: str) -> McpSession:
        async with self._locks[server]:
            client = self._clients.get(server)
            if client is not None and client.alive:
                return client
            if client is not None:
                await self._drop(server, client)
            client = await connect(server, self._configs[server], self._log_dir, self._start_timeout)
            self._clients[server] = client
            return client

    async def _drop(self, server: str, client: McpSession) -> None:
        if self._clients.get(server) is client:
            del self._clients[server]
        await close_client(client)

    async def stop(self) -> None:
        """Close every client and stop every server process started here."""
        clients, self._clients = list(self._clients.values()), {}
        self._tools.clear()
        self._legacy.clear()
        self._started = False
        await asyncio.gather(*(close_client(c) for c in clients))

    async def __aenter__(self) -> McpJsonTools:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
