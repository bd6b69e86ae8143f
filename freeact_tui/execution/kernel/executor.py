"""The local executor: a stateful IPython kernel (ipybox pieces) whose shell and MCP calls ask first.

Parts: an in-process tool server (``tool_server``: approval channel, and programmatic MCP calls of
allowed servers only), a Jupyter Kernel Gateway subprocess (``kernel_gateway``), and one kernel
reached through ``KernelConnection``; ``cell_run`` drives one cell. Inside the kernel, ipybox's init
code routes every ``!cmd``/``%%bash`` and MCP call through the approval channel; each request
surfaces from ``stream()`` as an ``ExecApproval``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freeact_tui.events import KernelState
from freeact_tui.execution.base import (
    RESTART_AFTER_INTERRUPT,
    ExecItem,
    ExecResult,
    ExecutorError,
    StateListener,
)
from freeact_tui.execution.kernel import spare_gateway
from freeact_tui.execution.kernel.background import BackgroundTasks
from freeact_tui.execution.kernel.cell_run import CellRun, Failed, Stop, route_approval
from freeact_tui.execution.kernel.client import KernelConnection
from freeact_tui.execution.kernel.gateway_process import (
    KernelGatewayProcess,
    kernel_environment,
    reopen_kernel,
)
from freeact_tui.execution.kernel.init_code import (
    CODE_PATHS_ENV,
    WARM_UP_CODE,
    generated_import_code,
    kernel_init_code,
)
from freeact_tui.execution.kernel.state_relay import StateRelay
from freeact_tui.execution.kernel.venv import KernelVenv, ensure_kernel_venv
from freeact_tui.execution.tools.allowlist import (
    DEFAULT_TOOL_TIMEOUT,
    McpServerEntry,
    bind_socket,
    parse_mcp_servers,
)
from freeact_tui.execution.tools.link import ToolLink
from freeact_tui.project import paths
from freeact_tui.project.code_manifest import CodeManifest
from freeact_tui.timeline import mark

if TYPE_CHECKING:  # mcpygen, mcp and uvicorn load while the kernel starts (``ToolLink.serve``)
    from mcpygen.tool_exec.approval.client import ApprovalRequest

    from freeact_tui.execution.tools.server import KernelToolServer


logger = logging.getLogger(__name__)


class KernelExecutor:
    """Runs code actions in a local ipybox kernel; ``!cmd``, ``%%bash`` and MCP calls need approval.

    Args:
        working_dir: The kernel's working directory (restored after every cell).
        images_dir: Where PNG output is saved (default: ``images`` in the user data dir).
        kernel_env: Extra environment variables of the kernel (it inherits only PATH, HOME, locale).
        approve_shell_cmds: Ask before every ``!cmd`` line and ``%%bash``/``%%sh`` cell.
        require_shell_escape: Refuse ``subprocess``/``os.system``/``os.exec*`` in the kernel.
        approve_tool_calls: Ask before every programmatic MCP tool call.
        kernel_init_timeout: Seconds the kernel may take to start.
        extra_pythonpath: Directories put on the kernel's ``PYTHONPATH`` (generated MCP APIs).
        approval_timeout: Seconds an approval may stay undecided before the call fails.
        warm_up: Load ipybox's approval client in the kernel right after it starts.
        host: Interface of the tool server and the kernel gateway.
        gateway_port: Fixed gateway port (default: a free one).
        tool_server_port: Fixed tool server port (default: a free one).
        mcp_servers: The MCP servers code may call through generated APIs: package name ->
            connection parameters (as ``PtcApis.params``), each optionally with ``timeout``
            (seconds per call). Calls of any other server, or with other parameters, are refused.
            Replace it with ``set_mcp_servers`` (generation usually finishes after the kernel starts).
        mcp_timeout: Seconds a programmatic tool call may run when its entry gives no ``timeout``.
        log_dir: Where MCP servers' stderr goes (default: ``logs`` in the user data dir).
        kernel_venv_dir: Where the kernel's own Python environment is kept (default: ``kernel-env``
            in the user data dir); ``!pip``/``%pip`` install there, never into the app's.
        import_working_dir: Whether the kernel imports the working dir's modules (after the installed
            ones); off before the folder is trusted.
        generated_root: The generated root (``mcptools``, ``gentools``) code imports from: never on a
            path, imported only through the kernel's checking finder (``code_finder``) against the app's
            manifest of it (``project.code_manifest``).

    Raises:
        ValueError: ``require_shell_escape`` without ``approve_shell_cmds``, or a bad ``mcp_servers``
            entry.
    """

    # Kernels run from a kernel environment layered over the app's (see ``kernel_venv``); a backend
    # whose kernels cannot see the host's file system turns it off.
    use_kernel_venv = True
    guards_planted_names = False
    """Whether each action's writes to names that configure code, at any depth of the folder, are undone
    (``isolation.planted.PlantGuard``): True for every isolated backend, whose code writes the folder with
    no approval of each effect (a local kernel's effects are approved one by one)."""

    def __init__(
        self,
        *,
        working_dir: Path,
        images_dir: Path | None = None,
        kernel_env: dict[str, str] | None = None,
        approve_shell_cmds: bool = True,
        require_shell_escape: bool = True,
        approve_tool_calls: bool = True,
        kernel_init_timeout: float = 30,
        extra_pythonpath: list[Path] | None = None,
        approval_timeout: float | None = None,
        warm_up: bool = True,
        host: str = "127.0.0.1",
        gateway_port: int | None = None,
        tool_server_port: int | None = None,
        mcp_servers: Mapping[str, Mapping[str, Any]] | None = None,
        mcp_timeout: float = DEFAULT_TOOL_TIMEOUT,
        log_dir: Path | None = None,
        kernel_venv_dir: Path | None = None,
        import_working_dir: bool = True,
        generated_root: Path | None = None,
    ) -> None:
        if require_shell_escape and not approve_shell_cmds:
            raise ValueError("require_shell_escape=True requires approve_shell_cmds=True")
        self.mcp_timeout = mcp_timeout
        self.import_working_dir = import_working_dir
        self.generated_root = generated_root
        self._manifest = CodeManifest(generated_root) if generated_root is not None else None
        self.log_dir = log_dir or paths.data_dir() / "logs"
        self.kernel_venv_dir = kernel_venv_dir or paths.data_dir() / "kernel-env"
        self.working_dir = working_dir.resolve()
        self.images_dir = images_dir or paths.data_dir() / "images"
        self.kernel_env = dict(kernel_env or {})
        self.approve_shell_cmds = approve_shell_cmds
        self.require_shell_escape = require_shell_escape
        self.approve_tool_calls = approve_tool_calls
        self.kernel_init_timeout = kernel_init_timeout
        self.extra_pythonpath = list(extra_pythonpath or [])
        self.approval_timeout = approval_timeout
        self.warm_up = warm_up
        self.host = host
        self._ports = (gateway_port, tool_server_port)
        self._states = StateRelay()
        self._lock = asyncio.Lock()
        # The tool server as we hold it: its allow-list, the task bringing it up, then the server.
        self._tool = ToolLink(parse_mcp_servers(mcp_servers, mcp_timeout))
        self._tool_failure: str | None = None  # why the tool server did not come up, once started
        self._gateway: KernelGatewayProcess | None = None
        self._conn: KernelConnection | None = None
        self._run: CellRun | None = None
        self._tasks = BackgroundTasks()
        self._stopping = False
        self._synced = False  # the warm-up installed the approval markers
        self.warm_up_seconds: float | None = None

    @property
    def state(self) -> KernelState:
        return self._states.state

    @property
    def kernel_pid(self) -> int | None:
        """Process id of the current kernel (None when none runs)."""
        return self._conn.pid if self._conn is not None and not self._conn.dead else None

    @property
    def gateway_pid(self) -> int | None:
        """Process id of the kernel gateway (None when it does not run)."""
        return self._gateway.pid if self._gateway is not None else None

    @property
    def mcp_servers(self) -> dict[str, McpServerEntry]:
        """The MCP servers code in the kernel may call (by package name)."""
        return dict(self._tool.servers)

    def set_mcp_servers(self, servers: Mapping[str, Mapping[str, Any]] | None) -> None:
        """Replace the allowed MCP servers (see ``mcp_servers`` in the class docstring).

        Takes effect at once, also while the kernel runs; a started server that was removed or
        whose parameters changed is stopped.

        Raises:
            ValueError: An entry is malformed (the allow-list is then left as it was).
        """
        self._tool.set_servers(parse_mcp_servers(servers, self.mcp_timeout))

    def add_state_listener(self, listener: StateListener) -> None:
        """``listener(state, detail)`` is called on every state change."""
        self._states.add_listener(listener)

    async def start(self) -> None:
        """Start the gateway and the kernel; returns when the kernel accepts code.

        The tool server may still be coming up then (see below), and the approval client is loaded in
        the kernel in the background; cells submitted meanwhile wait for it.

        Raises:
            ExecutorError: Something could not start (the message says what).
        """
        if self._states.state not in ("stopped", "failed"):
            return
        self._stopping = False
        self._tool_failure = None
        self._states.set("starting")
        try:
            if not self.working_dir.is_dir():
                raise ExecutorError(f"Working directory does not exist: {self.working_dir}")
            gateway_port, tool_port = self._ports
            # The tool server's socket and token first: the kernel's init code names them. The server
            # itself (mcpygen, mcp, uvicorn: seconds to import) comes up while the kernel is created.
            self._tool.bind(self.host, tool_port)
            self._tool.serve(
                partial(
                    self._tool.attach,
                    log_dir=self.log_dir,
                    approval_required=self.approve_shell_cmds or self.approve_tool_calls,
                    approval_timeout=self.approval_timeout,
                    on_approval=self._on_approval,
                    host=self.host,
                ),
                self._tools_failed,
            )
            probe = bind_socket(self.host, gateway_port, "kernel gateway")
            gateway_port = probe.getsockname()[1]
            probe.close()
            tool_host, tool_port = self._tool.address(self.host)
            env = kernel_environment(
                self.kernel_env,
                self.extra_pythonpath,
                tool_host,
                tool_port,
                await self._kernel_venv(),
            )
            if self._manifest is not None:
                root, manifest = self._generated_code()
                env[CODE_PATHS_ENV] = os.pathsep.join([root, os.path.dirname(manifest)])
            self._gateway = self._gateway_process(gateway_port, tool_port, env)
            mark("gateway_spawn:start")
            await self._gateway.start()
            mark("gateway_spawn:end")
            await self._connect_kernel(self._gateway)
            mark("kernel:created")
            self._tool.check()  # a tool server that failed already fails the start
        except BaseException as e:
            detail = str(e) if isinstance(e, ExecutorError) else f"Kernel start failed: {e!r}"
            await self._teardown()
            self._states.set("failed", detail)
            if isinstance(e, Exception) and not isinstance(e, ExecutorError):
                raise ExecutorError(detail) from e
            raise
        # Ready once the kernel runs code: a cell's first request to a tool server still coming up
        # waits in its socket's backlog (bound and listening above); one that fails to come up fails
        # the executor and the waiting cell (``_tools_failed``).
        self._states.set("ready")
        mark("kernel:ready")
        await self._lock.acquire()
        self._tasks.spawn(self._warm_up_and_release(self._lock))

    async def _tools_failed(self, error: Exception) -> bool:
        """The tool server did not come up; after ``start()`` returned, that fails the executor (it
        dealt with it): without the server the kernel can ask no approval, so it must not run code."""
        if self._states.state in ("starting", "stopped") or self._stopping:
            return False  # ``start()`` reports it (or nothing is running any more)
        await self._fail_without_tools(f"The kernel's tool server could not start: {error}")
        return True

    async def _tool_server_up(self) -> KernelToolServer | None:
        """The tool server once it is up (None: it did not come up, or the executor stops)."""
        return await self._tool.up()

    async def _fail_without_tools(self, detail: str) -> None:
        self._tool_failure = detail
        self._stopping = True  # no restart of the kernel that goes now
        run = self._run
        if run is not None and not run.finished:
            run.queue.put_nowait(Failed(detail))
        await self._teardown()
        self._states.set("failed", detail)

    async def _open_kernel(self) -> None:
        """A new kernel, in a new gateway if the last one has ended (a restart)."""
        assert self._gateway is not None
        if self._stopping:
            raise ExecutorError("The executor is stopping.")
        await reopen_kernel(self._gateway, self._connect_kernel, lambda: self._stopping)

    async def _connect_kernel(self, gateway: KernelGatewayProcess) -> None:
        """A new kernel in ``gateway``, connected and initialised (becomes ``self._conn``)."""
        self._synced = False
        conn = self._kernel_connection(gateway)
        host, port = self._tool_server_address()
        init = kernel_init_code(
            working_dir=self.working_dir,
            approve_shell_cmds=self.approve_shell_cmds,
            require_shell_escape=self.require_shell_escape,
            host=host,
            port=port,
            import_working_dir=self.import_working_dir,
        )
        if self._manifest is not None:
            root, manifest = self._generated_code()
            init += generated_import_code(root, manifest)
        try:
            await conn.open(init, self.kernel_init_timeout)
        except BaseException:
            await conn.close()
            raise
        self._conn = conn

    def _generated_code(self) -> tuple[str, str]:
        """The generated root and its manifest (written now, kept current until ``stop``)."""
        assert self._manifest is not None
        return str(self._manifest.root), str(self._manifest.open())

    def _gateway_owns_kernels(self) -> bool:
        """Stopping the gateway ends its kernels (a remote gateway's outlive us: they are deleted)."""
        return self._gateway is not None and self._gateway.pid is not None

    async def _kernel_venv(self) -> KernelVenv | None:
        """The environment kernels run from, where their ``pip`` installs (None: the app's own)."""
        if not self.use_kernel_venv:
            return None
        return await asyncio.to_thread(ensure_kernel_venv, self.kernel_venv_dir)

    def _tool_server_address(self) -> tuple[str, int]:
        """Where code in the kernel sends approval requests (a remote kernel asks in-band instead)."""
        return self._tool.address(self.host)

    def _gateway_process(self, port: int, tool_port: int, env: dict[str, str]) -> KernelGatewayProcess:
        """The gateway to run on ``port`` (a subclass may run it elsewhere, e.g. in a sandbox).

        The first one takes the spare the command line spawned at launch, if any (``spare_gateway``).
        """
        return KernelGatewayProcess(
            host=self.host, port=port, working_dir=self.working_dir, env=env, spare=spare_gateway.take()
        )

    def _kernel_connection(self, gateway: KernelGatewayProcess) -> KernelConnection:
        """A connection to a new kernel in ``gateway`` (a subclass may map its process id)."""
        return KernelConnection(gateway, self.images_dir, self._on_kernel_death)

    async def _restart_kernel(self, reason: str) -> None:
        """Replace the kernel (the caller holds the lock). Raises ExecutorError if none starts."""
        self._states.set("restarting", reason)
        if self._conn is not None:
            pid = self.kernel_pid
            if reason == RESTART_AFTER_INTERRUPT and pid is not None and self._gateway is not None:
                self._gateway.kill_kernel(pid)  # not waiting out its shutdown grace
            await self._conn.close()
            self._conn = None
        try:
            await self._open_kernel()
        except ExecutorError as e:
            self._states.set("failed", str(e))
            raise
        self._states.set("ready")
        await self._warm_up()

    async def _warm_up(self) -> None:
        if self._conn is None or not self.approve_shell_cmds or not self.warm_up:
            return
        started = time.monotonic()
        try:
            await self._conn.run_silent(WARM_UP_CODE)
        except ExecutorError as e:
            if not self._stopping:  # a stop during warm-up is not a failure worth a warning
                logger.warning("kernel warm-up failed: %s", e)
            return
        self.warm_up_seconds = time.monotonic() - started
        self._synced = True

    async def _warm_up_and_release(self, lock: asyncio.Lock) -> None:
        try:
            await self._warm_up()
        finally:
            lock.release()

    def _on_kernel_death(self, reason: str) -> None:
        if not self._stopping:
            self._states.set("restarting", reason)
            self._tasks.spawn(self._restart_when_free(reason))

    async def _restart_when_free(self, reason: str) -> None:
        async with self._lock:
            if not self._stopping and (self._conn is None or self._conn.dead):
                with contextlib.suppress(ExecutorError):
                    await self._restart_kernel(reason)

    async def stream(self, code: str, timeout: float | None = None) -> AsyncIterator[ExecItem]:  # noqa: ASYNC109
        """Run ``code``; yield approvals and chunks in output order, end with one ``ExecResult``.

        A cell submitted while another runs (or while the kernel warms up) waits its turn.

        Args:
            code: Python code (may contain ``!cmd`` lines and cell magics).
            timeout: Seconds of execution allowed; time waiting for approvals is not counted.

        Raises:
            ExecutorError: The executor is stopped or no kernel can be started.
        """
        self._check_running()
        lock = self._lock
        await lock.acquire()
        run = CellRun(timeout, lock)
        try:
            self._check_running()
            if self._conn is None or not self._conn.check_alive():
                await self._restart_kernel(self._conn.dead_reason or "" if self._conn else "no kernel")
            assert self._conn is not None
            self._run = run
            self._states.set("busy")
            await self._conn.execute(code, run.queue.put_nowait)
            run.budget.since = time.monotonic()
            async for item in run.drive(
                self._conn,
                synced=self._synced,
                executor_stopping=lambda: self._stopping,
            ):
                if isinstance(item, ExecResult):
                    self._finish(run)
                yield item
        finally:
            if not run.finished:
                run.finished = True
                if self._run is run:
                    # The consumer went away mid-cell: stop the cell before the next one may run.
                    self._tasks.spawn(self._abandon(run))
                else:
                    lock.release()

    def _check_running(self) -> None:
        if self._tool_failure is not None:
            raise ExecutorError(self._tool_failure)
        if self._states.state == "stopped" or self._stopping:
            raise ExecutorError("The kernel is not running (executor stopped).")

    def _finish(self, run: CellRun) -> None:
        run.finished = True
        self._run = None
        if run.restart_reason is not None and not self._stopping:
            # The result goes out now; the next cell waits on the lock until the new kernel is up.
            self._states.set("restarting", run.restart_reason)
            self._tasks.spawn(self._restart_and_release(run.restart_reason, run.lock))
            return
        if self._conn is not None and not self._conn.dead and not self._stopping:
            self._states.set("ready")
        run.lock.release()

    async def _restart_and_release(self, reason: str, lock: asyncio.Lock) -> None:
        try:
            await self._restart_kernel(reason)
        except ExecutorError:
            pass  # "failed" with the reason; the next cell tries again
        except Exception as e:  # noqa: BLE001 - a background task: reported as the kernel's state
            self._states.set("failed", f"The kernel could not be restarted: {e!r}")
        finally:
            lock.release()

    async def _abandon(self, run: CellRun) -> None:
        try:
            await run.abandon(self._conn, self._restart_kernel)
        except ExecutorError:
            pass
        finally:
            self._finish(run)

    async def _on_approval(self, request: ApprovalRequest) -> None:
        await route_approval(request, self._run, self.approve_tool_calls, self.approval_timeout)

    async def interrupt(self) -> None:
        """Interrupt the running cell; its ``stream`` ends with ``cancelled=True``."""
        if self._run is not None and not self._run.finished:
            self._run.queue.put_nowait(Stop())

    async def reset(self) -> None:
        """Restart the kernel (all state lost, init code re-run) and stop started MCP servers.

        Waits for a running cell to finish first.

        Raises:
            ExecutorError: The executor is stopped or the new kernel does not start.
        """
        self._check_running()
        async with self._lock:
            if self._tool.server is not None:
                await self._tool.server.reset()
            await self._restart_kernel("reset")

    async def stop(self) -> None:
        """Stop the kernel, the gateway and the tool server; no process is left behind."""
        self._stopping = True
        if self._run is not None and not self._run.finished:
            await self._run.reject_pending()
        await self._teardown()
        await self._tasks.cancel()
        if self._manifest is not None:
            self._manifest.close()
        if self._lock.locked():
            self._lock = asyncio.Lock()
        self._states.set("stopped")

    async def _teardown(self) -> None:
        await self._tool.cancel()  # before the link closes: a server it started halfway is then closed too
        if self._conn is not None:
            # A gateway we run ends its kernels with it: asking it to shut one down first takes ~1 s.
            await self._conn.close(delete=not self._gateway_owns_kernels())
            self._conn = None
        if self._gateway is not None:
            await self._gateway.stop()
            self._gateway = None
        await self._tool.close()
