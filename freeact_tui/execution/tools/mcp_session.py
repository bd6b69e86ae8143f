"""A connection to one MCP server (stdio or HTTP), owned by one task; stderr to a log file.

The kernel's tool server runs configured servers with it, and ``freeact_tui.mcp`` (JSON tools,
generating Python APIs) connects with it too: one MCP client for the whole app. mcpygen's ``MCPClient`` starts stdio servers with their stderr on the terminal (which the TUI owns)
and uses mcp's deprecated ``streamablehttp_client``. This session does neither, and one task owns
the connection from start to close, because the MCP SDK's anyio scopes must exit in the task that
entered them (the tool server calls from a new task per HTTP request).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

from mcp import ClientSession, McpError, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CONNECTION_CLOSED, CallToolResult, PaginatedRequestParams, TextContent, Tool
from mcpygen.vars import replace_variables

from freeact_tui.execution.orphans import die_with_parent
from freeact_tui.execution.private_files import open_private_append
from freeact_tui.project.paths import mcp_log_file

ToolResult = dict[str, Any] | str | None

# Bounds a clean shutdown; the stdio client escalates to SIGTERM/SIGKILL within it.
_CLOSE_TIMEOUT = 5.0


class McpToolError(Exception):
    """The tool ran and reported an error (the server is fine)."""


class McpSession:
    """A connection to one MCP server (stdio or HTTP) owned by one task.

    Args:
        name: The server's name (for the log file).
        params: Connection parameters as mcpygen takes them (``command``/``args``/``env`` or
            ``url``/``headers``/``type``); ``${VAR}`` references are resolved from the environment.
        log_dir: Where a stdio server's stderr goes.
    """

    def __init__(self, name: str, params: dict[str, Any], log_dir: Path) -> None:
        self.name = name
        self.params = params
        self.log_dir = log_dir
        self._session: ClientSession | None = None
        self._closing = asyncio.Event()
        self._ready: asyncio.Future[None] | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def alive(self) -> bool:
        """Started and not ended (a server that exited or dropped the connection is not alive)."""
        return self._session is not None and self._task is not None and not self._task.done()

    async def start(self, timeout: float) -> None:  # noqa: ASYNC109
        """Start the server and complete the MCP handshake.

        Raises:
            TimeoutError: No handshake within ``timeout`` seconds.
            Exception: The server could not be started or reached (the connection is closed again).
        """
        self._ready = asyncio.get_running_loop().create_future()
        # Read the outcome even when nobody awaits it any more (no "exception never retrieved").
        self._ready.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._task = asyncio.create_task(self._own(self._ready, timeout))
        try:
            # Shielded: a caller that goes away must not cancel the owner task's future.
            await asyncio.wait_for(asyncio.shield(self._ready), timeout + _CLOSE_TIMEOUT)
        except BaseException:
            await self.close()
            raise

    async def _own(self, ready: asyncio.Future[None], limit: float) -> None:
        try:
            async with self._connect() as (read, write), ClientSession(read, write) as session:
                await asyncio.wait_for(session.initialize(), limit)
                self._session = session
                ready.set_result(None)
                await self._closing.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(repr(exc)))
            if not isinstance(exc, Exception):
                raise
        finally:
            self._session = None

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[tuple[Any, Any]]:
        params = replace_variables(self.params, os.environ).replaced
        if "command" in params:
            # The server ends with the app even if the app is killed (and its pipes stay open elsewhere).
            command, args = die_with_parent(params["command"], list(params.get("args") or []))
            server = StdioServerParameters(**{**params, "command": command, "args": args})
            with self._errlog() as errlog:
                async with stdio_client(server, errlog=errlog) as (read, write):
                    yield read, write
            return
        url = params.get("url")
        if not isinstance(url, str):
            raise ValueError(f"neither `command` nor `url` in the parameters of MCP server `{self.name}`")
        headers = params.get("headers") or None
        kind = params.get("type")
        client: AbstractAsyncContextManager[Any]
        if kind == "streamable_http" or (kind is None and "/mcp" in url):
            client = _streamable_http(url, headers)
        elif kind == "sse" or (kind is None and "/sse" in url):
            client = sse_client(url, headers=headers)
        else:
            raise ValueError(
                f"cannot tell the transport of {url}: give `type` (streamable_http or sse) "
                "or a URL containing /mcp or /sse"
            )
        async with client as (read, write, *_):
            yield read, write

    @contextlib.contextmanager
    def _errlog(self) -> Iterator[TextIO]:
        log = mcp_log_file(self.log_dir, self.name)
        try:
            fh: TextIO = open_private_append(log)  # a server's stderr may show tokens
        except OSError:
            fh = open(os.devnull, "w")  # no log then, but never the terminal
        with fh:
            yield fh

    async def list_tools(self, timeout: float) -> list[Tool]:  # noqa: ASYNC109
        """Every tool of the server (all pages).

        Raises:
            TimeoutError: No complete listing within ``timeout`` seconds.
            Exception: The connection failed.
        """

        async def all_pages(session: ClientSession) -> list[Tool]:
            tools: list[Tool] = []
            cursor: str | None = None
            while True:
                page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor))
                tools.extend(page.tools)
                cursor = page.nextCursor
                if not cursor:
                    return tools

        return await asyncio.wait_for(all_pages(self._live()), timeout)

    async def call_tool(self, tool: str, args: dict[str, Any], timeout: float) -> CallToolResult:  # noqa: ASYNC109
        """Run one tool; its result as the server sent it (``isError`` set if the tool failed).

        Raises:
            TimeoutError: No answer within ``timeout`` seconds (the call is abandoned, the session kept).
            McpError: The server refused the call (the session is closed if the connection closed).
            Exception: The connection failed (the session is then closed).
        """
        session = self._live()
        try:
            return await asyncio.wait_for(session.call_tool(tool, arguments=args), timeout)
        except TimeoutError:
            raise
        except McpError as exc:
            if exc.error.code == CONNECTION_CLOSED:
                await self.close()
            raise
        except Exception:
            await self.close()
            raise

    async def call(self, tool: str, args: dict[str, Any], timeout: float) -> ToolResult:  # noqa: ASYNC109
        """Run one tool; the result as mcpygen's ``ToolRunner`` returns it.

        Raises:
            McpToolError: The tool reported an error.
            TimeoutError: No answer within ``timeout`` seconds (the call is abandoned).
            Exception: The connection failed (the session is then closed).
        """
        try:
            result = await self.call_tool(tool, args, timeout)
        except McpError as exc:
            if exc.error.code != CONNECTION_CLOSED:
                raise McpToolError(exc.error.message) from exc
            raise
        text = "\n".join(c.text for c in result.content if isinstance(c, TextContent))
        if result.isError:
            raise McpToolError(text or "(no message)")
        if result.structuredContent:
            return result.structuredContent
        return text or None

    def _live(self) -> ClientSession:
        session = self._session
        if session is None or not self.alive:
            raise ConnectionError("the server is not running")
        return session

    async def close(self) -> None:
        """Close the connection and stop a stdio server (terminated if it does not exit)."""
        self._closing.set()
        task = self._task
        if task is None or task.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), _CLOSE_TIMEOUT + 3)
        except BaseException:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


@asynccontextmanager
async def _streamable_http(url: str, headers: dict[str, str] | None) -> AsyncIterator[tuple[Any, Any, Any]]:
    """mcp's streamable HTTP client, without the deprecated ``streamablehttp_client`` wrapper."""
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams
