"""The executor's end of the tool server: the allow-list of MCP servers, its socket and token (known
before the kernel starts, whose init code names them), the task bringing the server up, the server
once imported and started, and our approval client on it."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import secrets
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from freeact_tui.execution.deferred_imports import defer_mcpygen_init, defer_rfc3987_syntax
from freeact_tui.execution.tools.allowlist import McpServerEntry, bind_socket, credentials_host
from freeact_tui.timeline import mark

if TYPE_CHECKING:  # mcpygen, mcp and uvicorn load while the kernel starts (``attach``)
    from mcpygen.tool_exec.approval.client import ApprovalClient, ApprovalRequest

    from freeact_tui.execution.tools.server import KernelToolServer


def import_tool_server() -> None:
    """Import the tool server's modules (mcpygen, mcp, uvicorn), what none of them uses at once deferred."""
    defer_rfc3987_syntax()
    defer_mcpygen_init()
    importlib.import_module("freeact_tui.execution.tools.server")


class ToolLink:
    """The tool server as the executor holds it (``server`` is ``None`` until ``attach`` has run).

    Args:
        servers: The MCP servers code may call (see ``parse_mcp_servers``); replace it with
            ``set_servers``.
    """

    def __init__(self, servers: dict[str, McpServerEntry] | None = None) -> None:
        self.servers: dict[str, McpServerEntry] = dict(servers or {})
        self.server: KernelToolServer | None = None
        self.sock: socket.socket | None = None  # bound (and listening) before the server runs on it
        self.token = ""
        self.approvals: ApprovalClient | None = None
        self._attach: asyncio.Task[None] | None = None  # the tool server coming up (``serve``)

    def set_servers(self, servers: dict[str, McpServerEntry]) -> None:
        """Replace the allow-list; a server that runs already takes it at once."""
        self.servers = servers
        if self.server is not None:
            self.server.set_servers(servers)

    def bind(self, host: str, port: int | None) -> socket.socket:
        """A listening socket and a new token: the kernel's first request waits in the backlog until
        the server serves."""
        sock = bind_socket(host, port, "tool server")
        sock.listen(128)
        self.sock, self.token = sock, secrets.token_urlsafe(32)
        return sock

    def address(self, host: str) -> tuple[str, int]:
        """The host (with our credentials in it) and port code in the kernel sends requests to."""
        assert self.sock is not None
        return credentials_host(self.token, host), self.sock.getsockname()[1]

    async def attach(
        self,
        *,
        log_dir: Path,
        approval_required: bool,
        approval_timeout: float | None,
        on_approval: Callable[[ApprovalRequest], Awaitable[None]],
        host: str,
    ) -> None:
        """Import and start the tool server on the bound socket and connect our approval client.

        The server gets the allow-list as it is when the server is built (it may change meanwhile).
        """
        assert self.sock is not None
        mark("tool_server:start")
        # Off the event loop: the kernel is created meanwhile (the gateway and the kernel work in
        # their own processes), and a UI keeps drawing.
        await asyncio.to_thread(import_tool_server)
        from mcpygen.tool_exec.approval.client import ApprovalClient

        from freeact_tui.execution.tools.server import KernelToolServer

        # Each is ours before it is awaited: a start cancelled halfway (the kernel failed) stops them.
        self.server = KernelToolServer(
            self.sock,
            servers=self.servers,
            log_dir=log_dir,
            approval_required=approval_required,
            approval_timeout=approval_timeout,
            token=self.token,
        )
        await self.server.start()
        port = self.sock.getsockname()[1]
        self.approvals = ApprovalClient(on_approval, host=self.server.client_host(host), port=port)
        await self.approvals.connect()
        mark("tool_server:end")

    def serve(
        self, bring_up: Callable[[], Awaitable[None]], on_failure: Callable[[Exception], Awaitable[bool]]
    ) -> None:
        """Bring the tool server up on the bound socket in the background: ``bring_up`` is ``attach``
        with its arguments (``functools.partial``).

        If that fails, ``on_failure(error)`` says whether it dealt with the failure (e.g. failed the
        executor, once its ``start()`` returned); if not, ``check`` raises the error.
        """

        async def attach() -> None:
            try:
                await bring_up()
            except Exception as e:
                if not await on_failure(e):
                    raise

        self._attach = asyncio.create_task(attach())

    def check(self) -> None:
        """Raise the error of a tool server that failed to come up already (nothing if it still comes up)."""
        if self._attach is not None and self._attach.done():
            self._attach.result()

    async def up(self) -> KernelToolServer | None:
        """The tool server once it is up (None: it did not come up, or the link closes)."""
        attach = self._attach
        if attach is not None and not attach.done():
            await asyncio.wait([attach])  # neither cancels it nor raises its error: the executor reports that
        return self.server

    async def cancel(self) -> None:
        """Stop bringing the server up (called from that task, e.g. by ``on_failure``, it lets it end)."""
        attach, self._attach = self._attach, None
        if attach is not None and attach is not asyncio.current_task():
            attach.cancel()  # before the link closes: a server it started halfway is then closed too
            await asyncio.gather(attach, return_exceptions=True)

    async def close(self) -> None:
        """Stop bringing the server up, disconnect, stop the server and close the socket (safe at any
        stage)."""
        await self.cancel()
        if self.approvals is not None:
            with contextlib.suppress(Exception):
                await self.approvals.disconnect()
            self.approvals = None
        if self.server is not None:
            with contextlib.suppress(Exception):
                await self.server.stop()
            self.server = None
        if self.sock is not None:
            self.sock.close()  # the server's, closed already, or never served on
            self.sock = None
