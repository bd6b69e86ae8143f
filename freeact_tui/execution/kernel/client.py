"""One IPython kernel in a Jupyter Kernel Gateway, reached over a websocket; cells never lose output.

ipybox's ``KernelClient.stream`` ends a cell at ``execute_reply`` (shell channel), before the
cell's last ``stream`` message (iopub) may have arrived, so output gets lost. Here one reader task
dispatches every message to its cell, and a cell ends only when both ``execute_reply`` and the
iopub ``status: idle`` of its request have arrived. Kernel death is detected by watching the
kernel process (the gateway runs with autorestart off, so we restart deliberately).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from base64 import b64decode
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import uuid4

import aiohttp
import psutil

from freeact_tui.execution.base import ExecutorError
from freeact_tui.execution.kernel.gateway_process import KernelGatewayProcess
from freeact_tui.execution.kernel.init_code import SYNC_MARK
from freeact_tui.project import files as projectfiles
from freeact_tui.timeline import enabled as timeline_enabled
from freeact_tui.timeline import mark

_PID_POLL_INTERVAL = 0.1
# Kernels started before giving up when each exits as it starts (see ``KernelConnection._start_kernel``).
_STARTUP_TRIES = 3
# Output the kernel sent just before dying may still be in flight through the gateway.
_DEATH_GRACE = 0.2
# Seconds between websocket pings; a pong missing for half of it closes the socket.
_HEARTBEAT = 10.0


@dataclass
class OutputText:
    """Text the kernel produced; ``sync`` counts approval markers seen (see ``kernel_init.WARM_UP_CODE``)."""

    text: str
    sync: int = 0


@dataclass
class CellEnd:
    """The cell finished: all its text, saved images, and the error text if it raised."""

    text: str
    images: list[Path]
    error: str | None
    reply: dict[str, Any] = field(default_factory=dict)


@dataclass
class KernelGone:
    """The kernel died (or the connection to it was lost) before the cell finished."""

    text: str
    images: list[Path]
    reason: str


CellEvent = OutputText | CellEnd | KernelGone
CellSink = Callable[[CellEvent], None]


class _Cell:
    """Collects the messages of one execute request until both its reply and its idle arrived."""

    def __init__(self, sink: CellSink, images_dir: Path, images_real: str | None = None) -> None:
        self.sink = sink
        self.images_dir = images_dir
        self.images_real = images_real or os.path.realpath(images_dir)
        self.chunks: list[str] = []
        self.images: list[Path] = []
        self.error: str | None = None
        self.reply: dict[str, Any] | None = None
        self.idle = False

    def out(self, text: str) -> None:
        # `!cmd` output comes through a pty.
        text = text.replace("\r\n", "\n")
        sync = text.count(SYNC_MARK)
        if sync:
            text = text.replace(SYNC_MARK, "")
        if text:
            self.chunks.append(text)
        if text or sync:
            self.sink(OutputText(text, sync))

    def text(self) -> str:
        return "".join(self.chunks).strip("\n")

    def feed(self, msg_type: str, content: dict[str, Any]) -> bool:
        """Take one message; True when the cell is complete."""
        if msg_type == "stream":
            self.out(content.get("text", ""))
        elif msg_type in ("execute_result", "display_data", "update_display_data"):
            data = content.get("data", {})
            if "image/png" in data:
                self._save_png(data["image/png"])
            if "text/plain" in data:
                self.out(data["text/plain"] + "\n")
        elif msg_type == "error":
            # Here, not at the top: ipybox pulls in mcpygen and mcp (~2 s), and the app's first screen
            # imports this module (via cell_run) long before a cell can fail.
            from ipybox.kernel_mgr.client import KernelClient

            lines = KernelClient._rewrite_traceback(content.get("traceback", []))
            trace = "\n".join(lines).strip("\n")
            self.error = trace or f"{content.get('ename', 'Error')}: {content.get('evalue', '')}"
            self.out(self.error + "\n")
        elif msg_type == "execute_reply":
            # The reply comes on the shell channel, the output on iopub: the two are not ordered, so
            # the reply's error summary waits for the cell's end (idle) and is used only when no
            # `error` message with the full traceback came.
            self.reply = content
        elif msg_type == "status" and content.get("execution_state") == "idle":
            self.idle = True
        done = self.reply is not None and self.idle
        if done and self.error is None and self.reply is not None and self.reply.get("status") == "error":
            self.error = f"{self.reply.get('ename', 'Error')}: {self.reply.get('evalue', '')}"
            self.out(self.error + "\n")
        return done

    def _save_png(self, data: str) -> None:
        # Small and synchronous on purpose: keeps images in order with the text around them. The folder
        # may be one the kernel writes too (a project's images_dir): never through a link it planted.
        try:
            name = f"{uuid4().hex[:12]}.png"
            path = projectfiles.write_new(self.images_dir, self.images_real, name, b64decode(data))
        except OSError as exc:
            self.out(f"(an image was not saved: {exc})\n")
            return
        self.images.append(path)


def _mark_kernel_times(pid: int, values: dict[str, Any]) -> None:
    """Timeline stages only the kernel knows: when its process began, and its run of the init code."""
    with contextlib.suppress(OSError, ValueError, IndexError, AttributeError):
        # Linux: the start in clock ticks since boot (psutil's create_time is off by up to 1 s)
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        mark("kernel:process", time.monotonic() - time.clock_gettime(time.CLOCK_BOOTTIME) + started)
    for key, stage in (("t0", "kernel_init_code:start"), ("t1", "kernel_init_code:end")):
        with contextlib.suppress(KeyError, TypeError, ValueError):
            mark(stage, float(values[key]))


class KernelConnection:
    """One kernel created in a gateway, its websocket, and a watcher on its process.

    Args:
        gateway: The running gateway to create the kernel in.
        images_dir: Where PNG display data is saved.
        on_death: Called once (with a reason) when the kernel dies or the connection is lost.
    """

    def __init__(
        self, gateway: KernelGatewayProcess, images_dir: Path, on_death: Callable[[str], None]
    ) -> None:
        self.gateway = gateway
        self.images_dir = images_dir
        self._images_real = os.path.realpath(images_dir)  # where it leads now: a later swap is refused
        self._on_death = on_death
        self._session = gateway.client_session(aiohttp.ClientTimeout(total=None, sock_connect=5))
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._session_id = uuid4().hex
        self.kernel_id: str | None = None
        self.pid: int | None = None
        self._cells: dict[str, _Cell] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self.dead_reason: str | None = None
        self._closed = False

    @property
    def dead(self) -> bool:
        return self.dead_reason is not None

    @property
    def kernel_url(self) -> str:
        return f"{self.gateway.base_url}/api/kernels/{self.kernel_id}"

    async def open(self, init_code: str, init_timeout: float) -> None:
        """Create the kernel, connect, run ``init_code`` and start watching the kernel process.

        Raises:
            ExecutorError: The gateway or kernel did not come up, or the init code failed.
        """
        expressions = {"pid": "__import__('os').getpid()"}
        if timeline_enabled():  # the kernel's own clock: when it began and ended the init code
            init_code = "_freeact_tui_t0 = __import__('time').monotonic()\n" + init_code
            expressions |= {"t0": "_freeact_tui_t0", "t1": "__import__('time').monotonic()"}
        try:
            async with asyncio.timeout(init_timeout):
                for _ in range(_STARTUP_TRIES):
                    reply = await self._start_kernel(init_code, expressions)
                    if reply is not None:
                        break
                else:
                    raise ExecutorError(
                        f"The kernel exited during startup, {_STARTUP_TRIES} times. "
                        f"Gateway log:\n{self.gateway.log_tail()}".rstrip()
                    )
                mark("kernel_init:reply")
        except TimeoutError:
            raise ExecutorError(
                f"The kernel did not start within {init_timeout:g}s (kernel_init_timeout). "
                f"Gateway log:\n{self.gateway.log_tail()}".rstrip()
            ) from None
        values = {
            k: v.get("data", {}).get("text/plain") for k, v in reply.get("user_expressions", {}).items()
        }
        pid_text = values.get("pid")
        if pid_text is None or not pid_text.isdigit():
            raise ExecutorError(f"Kernel started but did not report its process id: {reply!r}")
        self.pid = int(pid_text)
        if timeline_enabled():
            _mark_kernel_times(self.pid, values)
        self._tasks.append(asyncio.create_task(self._watch_pid(self.pid)))

    async def _start_kernel(self, init_code: str, expressions: dict[str, str]) -> dict[str, Any] | None:
        """Create a kernel, connect and run ``init_code``: its reply, or None when the kernel's process
        exited before answering (it is deleted again, for the caller to start another).

        A kernel can die as it starts through no fault of its own: the gateway chooses its ports by
        binding and closing them, and another process may take one before the kernel binds it. With
        autorestart off, nothing else would notice: the init code would wait for ``init_timeout``.
        """
        before = self._gateway_children()
        mark("kernel_create:start")
        await self._create_kernel()
        mark("kernel_create:end")
        started = self._gateway_children() - before  # its process (none seen: in a container, not watched)
        if not started:
            return await self._connect_and_init(init_code, expressions)
        # Raced against the process: the gateway holds the websocket's handshake until the kernel answers.
        init = asyncio.ensure_future(self._connect_and_init(init_code, expressions))
        exited = asyncio.ensure_future(_all_gone(started))
        await asyncio.wait([init, exited], return_when=asyncio.FIRST_COMPLETED)
        if init.done():
            exited.cancel()
            return init.result()
        init.cancel()
        await asyncio.gather(init, return_exceptions=True)
        self._cells.clear()
        await self._close_ws()
        self._ws = None
        await self._delete_kernel()
        self.kernel_id = None
        return None

    async def _connect_and_init(self, init_code: str, expressions: dict[str, str]) -> dict[str, Any]:
        """Connect to the created kernel and run ``init_code``: its reply (its reader is stopped if this is
        cancelled: a socket closed then is not the death of a running kernel)."""
        self._ws = await self._connect_ws()
        reader = asyncio.create_task(self._read())
        self._tasks.append(reader)
        try:
            return await self.run_silent(init_code, user_expressions=expressions)
        except asyncio.CancelledError:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
            with contextlib.suppress(ValueError):
                self._tasks.remove(reader)
            raise

    def _gateway_children(self) -> set[int]:
        """The gateway's child processes (its kernels) now; none if it cannot be seen."""
        if self.gateway.pid is None:
            return set()
        try:
            return {p.pid for p in psutil.Process(self.gateway.pid).children()}
        except psutil.Error:
            return set()

    async def _connect_ws(self) -> aiohttp.ClientWebSocketResponse:
        """The kernel's channels websocket (pinged every ``_HEARTBEAT`` s: a dead peer is noticed)."""
        return await self._session.ws_connect(
            f"{self.gateway.ws_url}/api/kernels/{self.kernel_id}/channels?session_id={self._session_id}",
            heartbeat=_HEARTBEAT,
            max_msg_size=0,
        )

    async def _create_kernel(self) -> None:
        url = f"{self.gateway.base_url}/api/kernels"
        while True:
            attempt = time.monotonic()
            if not self.gateway.alive:
                raise ExecutorError(
                    f"The Jupyter kernel gateway exited during startup. Gateway log:\n{self.gateway.log_tail()}"
                )
            try:
                async with self._session.post(url, json={}) as resp:
                    mark("gateway:listening", attempt)  # it refused the try before (<= 50 ms earlier)
                    if resp.status in (200, 201):
                        self.kernel_id = (await resp.json())["id"]
                        return
                    body = await resp.text()
                    raise ExecutorError(
                        f"The kernel gateway refused to start a kernel ({resp.status}): {body}"
                    )
            except aiohttp.ClientConnectionError:
                await asyncio.sleep(0.05)

    async def execute(
        self,
        code: str,
        sink: CellSink,
        *,
        silent: bool = False,
        user_expressions: dict[str, str] | None = None,
    ) -> str:
        """Send ``code``; ``sink`` gets OutputText events, then one CellEnd or KernelGone.

        Returns:
            The request's message id.
        """
        msg_id = uuid4().hex
        cell = _Cell(sink, self.images_dir, self._images_real)
        if self.dead or self._ws is None:
            sink(KernelGone("", [], self.dead_reason or "not connected"))
            return msg_id
        self._cells[msg_id] = cell
        request = {
            "header": {
                "msg_id": msg_id,
                "username": "",
                "session": self._session_id,
                "msg_type": "execute_request",
                "version": "5.3",
            },
            "parent_header": {},
            "metadata": {},
            "channel": "shell",
            "buffers": [],
            "content": {
                "code": code,
                "silent": silent,
                "store_history": not silent,
                "user_expressions": user_expressions or {},
                "allow_stdin": False,
                "stop_on_error": False,
            },
        }
        try:
            await self._ws.send_str(json.dumps(request))
        except (ConnectionError, RuntimeError) as e:
            self._mark_dead(f"cannot send to the kernel: {e}")
        return msg_id

    async def run_silent(self, code: str, user_expressions: dict[str, str] | None = None) -> dict[str, Any]:
        """Run ``code`` without output and wait for it.

        Returns:
            The ``execute_reply`` content.

        Raises:
            ExecutorError: The code raised, or the kernel died.
        """
        done: asyncio.Future[CellEvent] = asyncio.get_running_loop().create_future()

        def sink(event: CellEvent) -> None:
            if not isinstance(event, OutputText) and not done.done():
                done.set_result(event)

        await self.execute(code, sink, silent=True, user_expressions=user_expressions)
        event = await done
        if isinstance(event, KernelGone):
            raise ExecutorError(f"The kernel died while starting: {event.reason}")
        assert isinstance(event, CellEnd)
        if event.error is not None:
            raise ExecutorError(f"Kernel initialisation code failed:\n{event.error}")
        return event.reply

    async def interrupt(self) -> None:
        """Send SIGINT to the kernel (through the gateway)."""
        if self.kernel_id is None or self.dead:
            return
        with contextlib.suppress(aiohttp.ClientError, TimeoutError):
            async with asyncio.timeout(5):
                async with self._session.post(f"{self.kernel_url}/interrupt", json={}):
                    pass

    async def _read(self) -> None:
        assert self._ws is not None
        reason, _ = await self._pump(self._ws)
        self._mark_dead(reason)

    async def _pump(self, ws: aiohttp.ClientWebSocketResponse) -> tuple[str, bool]:
        """Dispatch the socket's messages until it closes.

        Returns:
            Why it ended, and whether the kernel itself said it died (rather than the socket).
        """
        try:
            async for frame in ws:
                if frame.type != aiohttp.WSMsgType.TEXT:
                    continue
                msg = json.loads(frame.data)
                content = msg.get("content", {})
                if msg.get("msg_type") == "status" and content.get("execution_state") in (
                    "dead",
                    "restarting",
                ):
                    return f"the kernel is {content['execution_state']}", True
                self._handle(msg)
        except (aiohttp.ClientError, ConnectionError) as e:
            return f"the connection to the kernel gateway failed: {e}", False
        return "the connection to the kernel gateway was closed", False

    def _handle(self, msg: dict[str, Any]) -> None:
        """One message from the kernel (a subclass may take some itself)."""
        self._dispatch(
            msg.get("parent_header", {}).get("msg_id"), msg.get("msg_type", ""), msg.get("content", {})
        )

    def _dispatch(self, parent_id: str | None, msg_type: str, content: dict[str, Any]) -> None:
        cell = self._cells.get(parent_id or "")
        if cell is not None and cell.feed(msg_type, content):
            del self._cells[parent_id or ""]
            cell.sink(CellEnd(cell.text(), cell.images, cell.error, cell.reply or {}))

    def check_alive(self) -> bool:
        """Look at the kernel process now (between cells the watcher may not have noticed yet)."""
        if not self.dead and self.pid is not None and _process_gone(self.pid):
            self._mark_dead("the kernel process exited")
        return not self.dead and self._ws is not None

    async def _watch_pid(self, pid: int) -> None:
        while not self.dead:
            await asyncio.sleep(_PID_POLL_INTERVAL)
            if _process_gone(pid):
                await asyncio.sleep(_DEATH_GRACE)
                self._mark_dead("the kernel process exited")
                return

    def _mark_dead(self, reason: str) -> None:
        if self.dead or self._closed:
            return
        self.dead_reason = reason
        cells, self._cells = self._cells, {}
        for cell in cells.values():
            cell.sink(KernelGone(cell.text(), cell.images, reason))
        self._on_death(reason)

    async def close(self, *, delete: bool = True) -> None:
        """Delete the kernel in the gateway and drop the connection; pending cells get KernelGone.

        Args:
            delete: Ask the gateway to shut the kernel down (False: the gateway is stopped next).
        """
        if self._closed:
            return
        self._closed = True
        cells, self._cells = self._cells, {}
        for cell in cells.values():
            cell.sink(KernelGone(cell.text(), cell.images, "the kernel was shut down"))
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if delete and self.kernel_id is not None and self.gateway.alive:
            await self._delete_kernel()
        await self._close_ws()
        await self._session.close()

    async def _delete_kernel(self) -> None:
        """Ask the gateway to shut the kernel down (given up after 5 s; an error is not ours to report)."""
        with contextlib.suppress(aiohttp.ClientError, TimeoutError):
            async with asyncio.timeout(5):
                async with self._session.delete(self.kernel_url):
                    pass

    async def _close_ws(self) -> None:
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()


async def _all_gone(pids: set[int]) -> None:
    """Return once every process of ``pids`` has exited."""
    while not all(_process_gone(pid) for pid in pids):  # noqa: ASYNC110 - an exit is only seen by looking
        await asyncio.sleep(_PID_POLL_INTERVAL)


def _process_gone(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True
