"""The local executor: a stateful IPython kernel (ipybox pieces) whose shell and MCP calls ask first.

Parts: an in-process mcpygen ``ToolServer`` (approval channel and programmatic MCP calls), a Jupyter
Kernel Gateway subprocess, and one kernel reached through ``KernelConnection``. Inside the kernel,
ipybox's init code routes every ``!cmd``/``%%bash`` and MCP call through the approval channel;
each request surfaces from ``stream()`` as an ``ExecApproval``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import uvicorn
from mcpygen import ApprovalClient, ApprovalRequest, ToolServer

from freeact_tui import paths
from freeact_tui.agent.events import KernelState
from freeact_tui.execution.base import (
    ApprovalKind,
    ExecApproval,
    ExecChunk,
    ExecItem,
    ExecResult,
    ExecutorError,
    StateListener,
)
from freeact_tui.execution.kernel_client import (
    WARM_UP_CODE,
    CellEnd,
    KernelConnection,
    KernelGatewayProcess,
    KernelGone,
    OutputText,
    kernel_init_code,
)

logger = logging.getLogger(__name__)

# Variables of the parent environment a kernel needs to behave normally; nothing secret.
_INHERITED_ENV = ("PATH", "HOME", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ")
# How long an interrupted cell may take to stop before the kernel is restarted instead.
_INTERRUPT_GRACE = 3.0
# How long a `!cmd` approval may wait for its marker in the output (see kernel_client.SYNC_MARK).
_SYNC_HOLD = 0.5


class _Wake:
    """Queue marker: an approval was decided, recompute the time budget."""


class _Stop:
    """Queue marker: the user asked to interrupt the cell."""


_Item = OutputText | CellEnd | KernelGone | ExecApproval | _Wake | _Stop


class _Budget:
    """Execution time of a cell, paused while any approval is pending."""

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.used = 0.0
        self.since = time.monotonic()
        self.pending = 0

    def pause(self) -> None:
        if self.pending == 0:
            self.used += time.monotonic() - self.since
        self.pending += 1

    def resume(self) -> None:
        self.pending -= 1
        if self.pending == 0:
            self.since = time.monotonic()

    def remaining(self) -> float | None:
        if self.timeout is None or self.pending:
            return None
        return self.timeout - self.used - (time.monotonic() - self.since)


class _Run:
    """One cell in flight: everything its stream yields arrives through ``queue``."""

    def __init__(self, timeout: float | None, lock: asyncio.Lock) -> None:
        self.lock = lock  # held for the cell; released when it is over
        self.queue: asyncio.Queue[_Item] = asyncio.Queue()
        self.budget = _Budget(timeout)
        self.undecided: set[Callable[[bool], Awaitable[None]]] = set()
        self.finished = False

    async def reject_pending(self) -> None:
        for respond in list(self.undecided):
            await respond(False)


class _QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # The host app owns SIGINT/SIGTERM; uvicorn would swallow them.
        yield


class _ToolServer(ToolServer):
    """mcpygen's ToolServer on a socket bound beforehand (no port race, no ``sys.exit`` on bind errors)."""

    def __init__(self, sock: socket.socket, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self._sock = sock

    async def start(self) -> None:
        config = uvicorn.Config(
            self.app, log_config=None, log_level="warning", access_log=False, ws="wsproto"
        )
        self._server = _QuietServer(config)
        self._server_task = asyncio.create_task(self._server.serve(sockets=[self._sock]))
        await self._ready()


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

    Raises:
        ValueError: ``require_shell_escape`` without ``approve_shell_cmds``.
    """

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
    ) -> None:
        if require_shell_escape and not approve_shell_cmds:
            raise ValueError("require_shell_escape=True requires approve_shell_cmds=True")
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
        self._state: KernelState = "stopped"
        self._detail = ""
        self._listeners: list[StateListener] = []
        self._lock = asyncio.Lock()
        self._tool_server: _ToolServer | None = None
        self._approvals: ApprovalClient | None = None
        self._gateway: KernelGatewayProcess | None = None
        self._conn: KernelConnection | None = None
        self._run: _Run | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopping = False
        self._synced = False  # the warm-up installed the approval markers
        self.warm_up_seconds: float | None = None

    @property
    def state(self) -> KernelState:
        return self._state

    @property
    def kernel_pid(self) -> int | None:
        """Process id of the current kernel (None when none runs)."""
        return self._conn.pid if self._conn is not None and not self._conn.dead else None

    @property
    def gateway_pid(self) -> int | None:
        """Process id of the kernel gateway (None when it does not run)."""
        return self._gateway.pid if self._gateway is not None else None

    def add_state_listener(self, listener: StateListener) -> None:
        """``listener(state, detail)`` is called on every state change."""
        self._listeners.append(listener)

    def _set_state(self, state: KernelState, detail: str = "") -> None:
        if (state, detail) == (self._state, self._detail):
            return
        self._state, self._detail = state, detail
        for listener in list(self._listeners):
            try:
                listener(state, detail)
            except Exception:
                logger.exception("kernel state listener failed")

    async def start(self) -> None:
        """Start the tool server, the gateway and the kernel; returns when the kernel accepts code.

        The approval client is then loaded in the kernel in the background; cells submitted
        meanwhile wait for it.

        Raises:
            ExecutorError: Something could not start (the message says what).
        """
        if self._state not in ("stopped", "failed"):
            return
        self._stopping = False
        self._set_state("starting")
        try:
            if not self.working_dir.is_dir():
                raise ExecutorError(f"Working directory does not exist: {self.working_dir}")
            gateway_port, tool_port = self._ports
            sock = _bind(self.host, tool_port, "tool server")
            self._tool_server = _ToolServer(
                sock,
                host=self.host,
                port=sock.getsockname()[1],
                approval_required=self.approve_shell_cmds or self.approve_tool_calls,
                approval_timeout=self.approval_timeout,
            )
            await self._tool_server.start()
            self._approvals = ApprovalClient(self._on_approval, host=self.host, port=self._tool_server.port)
            await self._approvals.connect()
            probe = _bind(self.host, gateway_port, "kernel gateway")
            gateway_port = probe.getsockname()[1]
            probe.close()
            self._gateway = KernelGatewayProcess(
                host=self.host,
                port=gateway_port,
                working_dir=self.working_dir,
                env=self._env(self._tool_server.port),
            )
            await self._gateway.start()
            await self._open_kernel()
        except BaseException as e:
            detail = str(e) if isinstance(e, ExecutorError) else f"Kernel start failed: {e!r}"
            await self._teardown()
            self._set_state("failed", detail)
            if isinstance(e, Exception) and not isinstance(e, ExecutorError):
                raise ExecutorError(detail) from e
            raise
        self._set_state("ready")
        await self._lock.acquire()
        self._spawn(self._warm_up_and_release(self._lock))

    def _env(self, tool_port: int) -> dict[str, str]:
        env = {k: os.environ[k] for k in _INHERITED_ENV if k in os.environ}
        env.update(self.kernel_env)
        pythonpath = [str(p.resolve()) for p in self.extra_pythonpath]
        if env.get("PYTHONPATH"):
            pythonpath.append(env["PYTHONPATH"])
        if pythonpath:
            env["PYTHONPATH"] = os.pathsep.join(pythonpath)
        # Generated MCP APIs find the tool server through these.
        env["TOOL_SERVER_HOST"] = self.host
        env["TOOL_SERVER_PORT"] = str(tool_port)
        # Silences debugpy's "frozen modules" warning that every new kernel prints.
        env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
        return env

    async def _open_kernel(self) -> None:
        assert self._gateway is not None and self._tool_server is not None
        self._synced = False
        if self._stopping:
            raise ExecutorError("The executor is stopping.")
        if not self._gateway.alive:
            await self._gateway.stop()
            await self._gateway.start()
        conn = KernelConnection(self._gateway, self.images_dir, self._on_kernel_death)
        init = kernel_init_code(
            working_dir=self.working_dir,
            approve_shell_cmds=self.approve_shell_cmds,
            require_shell_escape=self.require_shell_escape,
            host=self.host,
            port=self._tool_server.port,
        )
        try:
            await conn.open(init, self.kernel_init_timeout)
        except BaseException:
            await conn.close()
            raise
        self._conn = conn

    async def _restart_kernel(self, reason: str) -> None:
        """Replace the kernel (the caller holds the lock). Raises ExecutorError if none starts."""
        self._set_state("restarting", reason)
        if self._conn is not None:
            await self._conn.close()
            self._conn = None
        try:
            await self._open_kernel()
        except ExecutorError as e:
            self._set_state("failed", str(e))
            raise
        self._set_state("ready")
        await self._warm_up()

    async def _warm_up(self) -> None:
        if self._conn is None or not self.approve_shell_cmds or not self.warm_up:
            return
        started = time.monotonic()
        try:
            await self._conn.run_silent(WARM_UP_CODE)
        except ExecutorError as e:
            logger.warning("kernel warm-up failed: %s", e)
            return
        self.warm_up_seconds = time.monotonic() - started
        self._synced = True

    async def _warm_up_and_release(self, lock: asyncio.Lock) -> None:
        try:
            await self._warm_up()
        finally:
            lock.release()

    def _spawn(self, coro: Awaitable[None]) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _on_kernel_death(self, reason: str) -> None:
        if not self._stopping:
            self._set_state("restarting", reason)
            self._spawn(self._restart_when_free(reason))

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
        if self._state == "stopped" or self._stopping:
            raise ExecutorError("The kernel is not running (executor stopped).")
        lock = self._lock
        await lock.acquire()
        run = _Run(timeout, lock)
        try:
            if self._stopping:
                raise ExecutorError("The kernel is not running (executor stopped).")
            if self._conn is None or not self._conn.check_alive():
                await self._restart_kernel(self._conn.dead_reason or "" if self._conn else "no kernel")
            assert self._conn is not None
            self._run = run
            self._set_state("busy")
            await self._conn.execute(code, run.queue.put_nowait)
            run.budget.since = time.monotonic()
            seen: list[str] = []  # output so far, for a cell that has to be abandoned
            held: list[ExecApproval] = []  # `!cmd` approvals waiting for their marker in the output
            marks = 0  # markers that arrived before their approval
            stopping: str | None = None  # "cancelled" or "timed_out" once the kernel was interrupted
            hold_until = grace_until = 0.0
            while True:
                now = time.monotonic()
                waits = [grace_until - now if stopping else run.budget.remaining()]
                waits += [hold_until - now] if held else []
                item = await _next(run.queue, min((w for w in waits if w is not None), default=None))
                match item:
                    case OutputText(text=text, sync=sync):
                        if text:
                            seen.append(text)
                            yield ExecChunk(text)
                        for _ in range(sync):
                            if held:
                                yield held.pop(0)
                            else:
                                marks += 1
                    case ExecApproval() if stopping is not None:
                        await item.reject()
                    case ExecApproval(kind="shell" | "script") if self._synced and not marks:
                        hold_until = hold_until if held else time.monotonic() + _SYNC_HOLD
                        held.append(item)
                    case ExecApproval():
                        marks = max(0, marks - 1) if item.kind != "mcp" else marks
                        yield item
                    case CellEnd():
                        result = ExecResult(item.text, item.images, is_error=item.error is not None)
                        if stopping is not None:
                            result = _stopped(result, stopping, timeout)
                        self._finish(run)
                        yield result
                        return
                    case KernelGone():
                        result = _died(item, stopped=self._stopping)
                        self._finish(run)
                        yield result
                        return
                    case None if held and time.monotonic() >= hold_until:
                        while held:
                            yield held.pop(0)
                    case _Stop() | None if stopping is None:
                        left = run.budget.remaining()
                        if isinstance(item, _Stop) or (left is not None and left <= 0):
                            stopping = "cancelled" if isinstance(item, _Stop) else "timed_out"
                            grace_until = time.monotonic() + _INTERRUPT_GRACE
                            held.clear()
                            await run.reject_pending()
                            await self._conn.interrupt()
                    case None if time.monotonic() >= grace_until:
                        # The cell ignored the interrupt: only a new kernel frees it.
                        result = _stopped(
                            ExecResult("".join(seen).strip("\n"), is_error=True), stopping, timeout
                        )
                        result.text += (
                            "\nThe cell did not stop, so the kernel was restarted: all state was lost."
                        )
                        with contextlib.suppress(ExecutorError):
                            await self._restart_kernel("the cell did not stop after an interrupt")
                        self._finish(run)
                        yield result
                        return
        finally:
            if not run.finished:
                run.finished = True
                if self._run is run:
                    # The consumer went away mid-cell: stop the cell before the next one may run.
                    self._spawn(self._abandon(run))
                else:
                    lock.release()

    def _finish(self, run: _Run) -> None:
        run.finished = True
        self._run = None
        if self._conn is not None and not self._conn.dead and not self._stopping:
            self._set_state("ready")
        run.lock.release()

    async def _abandon(self, run: _Run) -> None:
        try:
            await run.reject_pending()
            if self._conn is not None and not self._conn.dead:
                await self._conn.interrupt()
                deadline = time.monotonic() + _INTERRUPT_GRACE
                while not isinstance(
                    item := await _next(run.queue, deadline - time.monotonic()), CellEnd | KernelGone
                ):
                    if item is None:
                        await self._restart_kernel("the cell did not stop after an interrupt")
                        break
                    if isinstance(item, ExecApproval):
                        await item.reject()
        except ExecutorError:
            pass
        finally:
            self._finish(run)

    async def _on_approval(self, request: ApprovalRequest) -> None:
        if request.server_name == "ipybox" and request.tool_name in ("shell", "shell_magic"):
            kind: ApprovalKind = "shell" if request.tool_name == "shell" else "script"
            approval = ExecApproval(kind, command=str(request.tool_args.get("cmd", "")))
        elif not self.approve_tool_calls:
            await request.accept()
            return
        else:
            args = dict(request.tool_args)
            approval = ExecApproval("mcp", server=request.server_name, tool=request.tool_name, args=args)
        run = self._run
        if run is None or run.finished:
            await request.reject()
            return
        run.budget.pause()
        decided = False

        def settle() -> bool:
            nonlocal decided
            if decided:
                return False
            decided = True
            run.undecided.discard(respond)
            run.budget.resume()
            run.queue.put_nowait(_Wake())
            return True

        async def respond(ok: bool) -> None:
            if settle():
                await (request.accept() if ok else request.reject())

        if self.approval_timeout is not None:
            # The tool server fails the call at that moment; stop pausing the budget then too.
            asyncio.get_running_loop().call_later(self.approval_timeout, settle)
        approval.respond = respond
        run.undecided.add(respond)
        run.queue.put_nowait(approval)

    async def interrupt(self) -> None:
        """Interrupt the running cell; its ``stream`` ends with ``cancelled=True``."""
        if self._run is not None and not self._run.finished:
            self._run.queue.put_nowait(_Stop())

    async def reset(self) -> None:
        """Restart the kernel (all state lost, init code re-run) and stop started MCP servers.

        Waits for a running cell to finish first.

        Raises:
            ExecutorError: The executor is stopped or the new kernel does not start.
        """
        if self._state == "stopped" or self._stopping:
            raise ExecutorError("The kernel is not running (executor stopped).")
        async with self._lock:
            if self._tool_server is not None:
                await self._tool_server.reset()
            await self._restart_kernel("reset")

    async def stop(self) -> None:
        """Stop the kernel, the gateway and the tool server; no process is left behind."""
        self._stopping = True
        if self._run is not None and not self._run.finished:
            await self._run.reject_pending()
        await self._teardown()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._lock.locked():
            self._lock = asyncio.Lock()
        self._set_state("stopped")

    async def _teardown(self) -> None:
        if self._conn is not None:
            await self._conn.close()
            self._conn = None
        if self._gateway is not None:
            await self._gateway.stop()
            self._gateway = None
        if self._approvals is not None:
            with contextlib.suppress(Exception):
                await self._approvals.disconnect()
            self._approvals = None
        if self._tool_server is not None:
            with contextlib.suppress(Exception):
                await self._tool_server.stop()
            self._tool_server = None


async def _next(queue: asyncio.Queue[_Item], wait: float | None) -> _Item | None:
    """The next queue item, or None when ``wait`` seconds pass first."""
    if wait is not None and wait <= 0:
        return None if queue.empty() else queue.get_nowait()
    try:
        return await asyncio.wait_for(queue.get(), wait)
    except TimeoutError:
        return None


def _stopped(result: ExecResult, why: str | None, timeout: float | None) -> ExecResult:
    result.is_error = True
    if why == "timed_out":
        result.timed_out = True
        note = (
            f"Execution timed out after {timeout:g}s (approval waits excluded); the kernel was interrupted."
        )
    else:
        result.cancelled = True
        note = "Execution interrupted."
    result.text = f"{result.text}\n{note}".strip()
    return result


def _died(gone: KernelGone, *, stopped: bool) -> ExecResult:
    note = (
        "The executor was stopped."
        if stopped
        else f"The kernel died ({gone.reason}); a new kernel is started and all state was lost."
    )
    return ExecResult(f"{gone.text}\n{note}".strip(), gone.images, is_error=True, kernel_died=not stopped)


def _bind(host: str, port: int | None, what: str) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((host, port or 0))
    except OSError as e:
        sock.close()
        raise ExecutorError(f"Cannot listen on {host}:{port} for the {what}: {e.strerror or e}") from e
    return sock
