"""The kernel's tool server: the approval channel, and programmatic MCP calls limited to an allow-list.

mcpygen's ``ToolServer`` starts whatever server command a request carries, so code in the kernel
could start any process on the host while the approval dialog shows only ``server.tool``. This one
runs only configured servers, with the configured parameters, refuses anything else before asking
for approval, bounds every call by the server's timeout, and logs stdio servers' stderr to files.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hmac
import logging
import secrets
import socket
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import uvicorn
from mcpygen.tool_exec.server import ToolCall, ToolServer  # not the package: see deferred_imports
from starlette.types import ASGIApp, Receive, Scope, Send

from freeact_tui.execution.tools.allowlist import (
    DEFAULT_TOOL_TIMEOUT,
    TOKEN_USER,
    McpServerEntry,
    bind_socket,
    credentials_host,
    parse_mcp_servers,
)
from freeact_tui.execution.tools.mcp_session import McpSession, McpToolError
from freeact_tui.project.paths import log_tail, mcp_log_file

logger = logging.getLogger(__name__)

# A request may come in before the executor's approval client has connected (the kernel runs code while
# the server comes up); it waits this long for the client, which connects right after the server starts.
_CLIENT_WAIT = 10.0

# Starting may take longer than a call (npx/uvx fetch packages first), so it gets at least this long.
_MIN_START_TIMEOUT = 30.0
_ABANDON_GRACE = 1.0
"""Seconds an abandoned call gets to unwind (a server it was starting is closed) before it is answered."""


class TokenGuard:
    """ASGI middleware: every request but ``GET /status`` needs ``Authorization: Basic freeact:<token>``.

    mcpygen's clients in the kernel build their URLs from a host name; ``freeact:<token>@127.0.0.1``
    makes aiohttp, requests and websockets send these credentials without any change to them.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = "Basic " + base64.b64encode(f"{TOKEN_USER}:{token}".encode()).decode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope.get("path") == "/status":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
        if hmac.compare_digest(given, self._expected):
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # uvicorn answers 403
        else:
            # Read the body first: a client still writing it would see a reset instead of the 401.
            while (await receive()).get("more_body"):
                pass
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b""})


class _QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # The host app owns SIGINT/SIGTERM; uvicorn would swallow them.
        yield


class KernelToolServer(ToolServer):
    """mcpygen's ToolServer on a socket bound beforehand, running only allowed MCP servers.

    Requests need the random ``token`` of this server (see ``TokenGuard``; ``client_host`` is the
    host name that carries it), so no other user of the machine can ask for approvals or calls.

    Args:
        sock: A bound socket to serve on (no port race, no ``sys.exit`` on bind errors).
        servers: The allow-list (see ``parse_mcp_servers``); replace it with ``set_servers``.
        log_dir: Where stdio servers' stderr goes (``mcp-<name>.log``).
        approval_required: Ask the approval client before each call.
        approval_timeout: Seconds an approval may stay undecided.
        token: The credentials' password (default: a new random one); a kernel created before this
            server was built was given it already.
    """

    def __init__(
        self,
        sock: socket.socket,
        *,
        servers: Mapping[str, McpServerEntry],
        log_dir: Path,
        approval_required: bool,
        approval_timeout: float | None,
        token: str | None = None,
    ) -> None:
        host, port = sock.getsockname()[:2]
        super().__init__(
            host=host, port=port, approval_required=approval_required, approval_timeout=approval_timeout
        )
        self._sock = sock
        self.token = token or secrets.token_urlsafe(32)
        self.log_dir = log_dir
        self._servers = dict(servers)
        self._sessions: dict[str, McpSession] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping = asyncio.Event()
        """Set by ``stop``: every call in flight is answered at once."""

    @property
    def servers(self) -> dict[str, McpServerEntry]:
        """The current allow-list."""
        return dict(self._servers)

    def set_servers(self, servers: Mapping[str, McpServerEntry]) -> None:
        """Replace the allow-list; running servers that left it or changed parameters are stopped."""
        self._servers = dict(servers)
        for name, session in list(self._sessions.items()):
            entry = self._servers.get(name)
            if (entry is None or entry.params != session.params) and self._loop is not None:
                del self._sessions[name]
                # The setter may be called outside the loop; the session lives in it.
                self._loop.call_soon_threadsafe(self._close_soon, session)

    def _close_soon(self, session: McpSession) -> None:
        task = asyncio.create_task(session.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def client_host(self, host: str) -> str:
        """``host`` with this server's credentials, for mcpygen's clients (``http://<it>:<port>/…``)."""
        return credentials_host(self.token, host)

    async def start(self) -> None:
        """Serve on the socket; returns when the server answers."""
        self._loop = asyncio.get_running_loop()
        config = uvicorn.Config(
            TokenGuard(self.app, self.token),
            log_config=None,
            log_level="warning",
            access_log=False,
            ws="wsproto",
        )
        self._server = _QuietServer(config)
        self._server_task = asyncio.create_task(self._server.serve(sockets=[self._sock]))
        await self._ready()

    async def _approve(self, server_name: str, tool_name: str, tool_args: dict[str, Any]) -> dict[str, Any] | None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _CLIENT_WAIT
        # mcpygen's channel says when it closes, not when it opens: looked at every 10 ms.
        while self._approval_channel.approval_required and not self._approval_channel.open and loop.time() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        return await super()._approve(server_name, tool_name, tool_args)

    async def run(self, request: ToolCall) -> dict[str, Any]:
        """``POST /run``, answered whatever the call does: when the server stops (``stop``) a call still
        waiting (for its approval, its MCP server's start, its tool) is abandoned and answered with an
        error, so that the HTTP server's shutdown waits for no request and cancels none (each cancelled
        request would log a traceback)."""
        call = asyncio.ensure_future(self._run(request))
        stopping: asyncio.Future[Any] = asyncio.ensure_future(self._stopping.wait())
        try:
            await asyncio.wait({call, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
            if not call.done():
                call.cancel()  # a server it was starting is closed by its own cancellation
        if call.done() and not call.cancelled():
            return call.result()
        await asyncio.wait({call}, timeout=_ABANDON_GRACE)
        return {
            "error": f"the tool server stopped during the call of `{request.server_name}.{request.tool_name}`; "
            "the call was abandoned."
        }

    async def stop(self) -> None:
        """Stop: the calls in flight are abandoned first (``run``), then mcpygen's stop (the MCP servers, the
        approval channel, the HTTP server, which then has no request left to wait for)."""
        self._stopping.set()
        await super().stop()

    async def _run(self, request: ToolCall) -> dict[str, Any]:
        """Refuse servers not in the allow-list, then ask for approval, then call."""
        name, tool = request.server_name, request.tool_name
        entry = self._servers.get(name)
        if entry is None:
            known = ", ".join(f"`{n}`" for n in sorted(self._servers)) or "none"
            logger.info("refused a call of unconfigured MCP server %r", name)
            return {
                "error": f"MCP server `{name}` is not configured (configured: {known}); the call was refused."
            }
        if request.server_params != entry.params:
            logger.info("refused a call of MCP server %r with other parameters", name)
            return {
                "error": f"MCP server `{name}`: the call carries connection parameters that differ from "
                "the configured ones; the call was refused."
            }
        if error := await self._approve(name, tool, request.tool_args):
            return error
        if self._servers.get(name) != entry:
            return {
                "error": f"MCP server `{name}` was reconfigured while the call waited; the call was refused."
            }
        log = mcp_log_file(self.log_dir, name) if "command" in entry.params else None
        offset = _size(log)
        try:
            session = await self._session(name, entry)
        except Exception as exc:
            why = _describe(exc, entry, _start_timeout(entry))
            tail = log_tail(log, offset)
            return {
                "error": f"MCP server `{name}` could not be started: {why}.{self._log_hint(name, entry)}"
                + (f"\nIts last words:\n{tail}" if tail else "")
            }
        try:
            return {"result": await session.call(tool, request.tool_args, entry.timeout)}
        except McpToolError as exc:
            return {"error": str(exc)}
        except TimeoutError:
            return {
                "error": f"MCP server `{name}`: tool `{tool}` did not answer within {entry.timeout:g} s; "
                "the call was abandoned."
            }
        except Exception as exc:
            return {
                "error": f"MCP server `{name}` stopped during the call of `{tool}` ({_describe(exc, entry)}); "
                f"it is started again on the next call.{self._log_hint(name, entry)}"
            }

    async def _session(self, name: str, entry: McpServerEntry) -> McpSession:
        async with self._locks.setdefault(name, asyncio.Lock()):
            session = self._sessions.get(name)
            if session is not None and session.alive and session.params == entry.params:
                return session
            if session is not None:
                del self._sessions[name]
                await session.close()
            session = McpSession(name, entry.params, self.log_dir)
            await session.start(_start_timeout(entry))
            self._sessions[name] = session
            return session

    def _log_hint(self, name: str, entry: McpServerEntry) -> str:
        return f" Its stderr is in {mcp_log_file(self.log_dir, name)}." if "command" in entry.params else ""

    async def _close_mcp_clients(self) -> None:
        # Called by mcpygen's ``reset`` (PUT /reset) and ``stop``.
        sessions, self._sessions = list(self._sessions.values()), {}
        await asyncio.gather(*(s.close() for s in sessions), *self._closing, return_exceptions=True)


def _size(log: Path | None) -> int:
    try:
        return log.stat().st_size if log is not None else 0
    except OSError:
        return 0


def _start_timeout(entry: McpServerEntry) -> float:
    return max(entry.timeout, _MIN_START_TIMEOUT)


def _describe(exc: BaseException, entry: McpServerEntry, limit: float | None = None) -> str:
    """The root cause of a start or connection failure, in a few words."""
    leaves = list(_leaves(exc))
    if any(isinstance(e, FileNotFoundError) for e in leaves):
        return f"command not found: {entry.params.get('command')}"
    if limit is not None and any(isinstance(e, TimeoutError) for e in leaves):
        return f"no answer within {limit:g} s"
    leaf = leaves[0] if leaves else exc
    return str(leaf) or type(leaf).__name__


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and its causes, with exception groups (anyio task groups) flattened."""
    seen = 0
    todo = [exc]
    while todo and seen < 50:
        current = todo.pop(0)
        seen += 1
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
            continue
        yield current
        if current.__cause__ is not None:
            todo.append(current.__cause__)


__all__ = [
    "DEFAULT_TOOL_TIMEOUT",
    "KernelToolServer",
    "McpServerEntry",
    "TokenGuard",
    "bind_socket",
    "parse_mcp_servers",
]
