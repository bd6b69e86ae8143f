"""The remote executor: kernels in an already running Jupyter Kernel Gateway or Enterprise Gateway.

No gateway process of ours runs; the kernel is created with ``POST <base>/api/kernels`` and deleted
on stop. ``gateway_endpoint`` says where the gateway is and how to talk to it (``http``/``https``,
base path, CA bundle, token from ``JUPYTER_GATEWAY_AUTH_TOKEN``). The gateway lets a client set
only ``KERNEL_``-prefixed variables of a new kernel (plus those in its ``env_whitelist``), so our
variables (``PYTHONPATH``, the user's ``kernel_env``) travel as ``KERNEL_FREEACT_<NAME>`` and the
init code copies them back before ipybox's init runs.

Approvals of ``!cmd``/``%%bash`` and programmatic MCP tool calls travel in-band (``inband``): the
kernel asks over its own stdin channel (``input_request``), we answer with ``input_reply`` after
the local tool server decided or ran the call. The kernel needs no route back to this machine.

There is no local process to watch: death is seen on the websocket (the gateway's restarter
announces ``restarting``/``dead``) and by polling the kernel's REST model; interrupts go through
``POST …/interrupt``. A websocket that drops is re-attached to the same kernel (same session id,
so the gateway replays what it buffered) on Jupyter's retry schedule; a kernel that cannot be
re-attached counts as dead and the executor starts a new one.

Limits: ``working_dir`` must exist on the remote machine too (the kernel changes into it);
generated MCP APIs must be importable there (``PYTHONPATH`` is passed, the files are not copied);
images written by code are on the remote machine's file system.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import uuid4

import aiohttp

from freeact_tui.execution.base import ExecutorError
from freeact_tui.execution.gateway.endpoint import (
    REQUEST_TIMEOUT_ENV,
    GatewayEndpoint,
    kernel_request_env,
    resolve_endpoint,
)
from freeact_tui.execution.gateway.inband import INBAND_CODE, INBAND_PREFIX, InbandHandler, answer_inband
from freeact_tui.execution.kernel.client import CellSink, KernelConnection
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.execution.kernel.gateway_process import KernelGatewayProcess
from freeact_tui.execution.kernel.init_code import WARM_UP_CODE

logger = logging.getLogger(__name__)

ENV_PREFIX = "KERNEL_FREEACT_"
_POLL_INTERVAL = 1.0
# Consecutive failed polls before the gateway counts as lost.
_POLL_FAILURES = 3
_CHECK_TIMEOUT = 10.0
# Deletes of a kernel tried (0.5 s apart) before it is left to the gateway's culling.
DELETE_ATTEMPTS = 10
# What ipybox's handlers are told the tool server is: they never connect (requests go in-band).
INBAND_HOST = "in-band.invalid"

# Runs before ipybox's init code: restore our variables and PYTHONPATH (set after start).
_ENV_PRELUDE = f"""\
import os as _os, sys as _sys
for _k, _v in list(_os.environ.items()):
    if _k.startswith({ENV_PREFIX!r}):
        _os.environ[_k[{len(ENV_PREFIX)}:]] = _v
for _p in reversed(_os.environ.get('PYTHONPATH', '').split(_os.pathsep)):
    if _p and _p not in _sys.path:
        _sys.path.insert(0, _p)
del _os, _sys
"""


class RemoteGateway(KernelGatewayProcess):
    """A Jupyter gateway run by someone else: checked on start, never spawned or stopped.

    Args:
        endpoint: Where the gateway is and how to talk to it.
        working_dir: The kernel's working directory (on the gateway's machine).
        env: Variables for the kernel (sent as ``KERNEL_FREEACT_<NAME>``).
    """

    def __init__(self, *, endpoint: GatewayEndpoint, working_dir: Path, env: dict[str, str]) -> None:
        super().__init__(host=endpoint.host, port=endpoint.port, working_dir=working_dir, env=env)
        self.env = env  # the local gateway's token is not this gateway's: the endpoint has its own
        self.endpoint = endpoint
        self.url = endpoint.url
        self._up = False

    @property
    def base_url(self) -> str:
        return self.endpoint.http_base

    @property
    def ws_url(self) -> str:
        return self.endpoint.ws_base

    def client_session(self, timeout: aiohttp.ClientTimeout) -> aiohttp.ClientSession:
        return self.endpoint.session(timeout)

    @property
    def alive(self) -> bool:
        return self._up

    @property
    def pid(self) -> int | None:
        return None

    async def start(self) -> None:
        """Check that a gateway answers at the URL and accepts our token.

        Raises:
            ExecutorError: Nothing answers, TLS fails, the token is refused, or it is not a Jupyter gateway.
        """
        ep = self.endpoint
        try:
            async with self.client_session(aiohttp.ClientTimeout(total=_CHECK_TIMEOUT)) as session:
                async with session.get(f"{self.base_url}/api") as resp:
                    if resp.status != 200:
                        raise ExecutorError(ep.explain_status(resp.status, await resp.text(), "reach it"))
                    info = await resp.json(content_type=None)
                if not isinstance(info, dict) or "version" not in info:
                    raise ExecutorError(f"{ep.url} does not answer like a Jupyter gateway (GET /api).")
                # /api is open on some gateways; the kernel specs need the token.
                async with session.get(f"{self.base_url}/api/kernelspecs") as resp:
                    if resp.status != 200:
                        raise ExecutorError(
                            ep.explain_status(resp.status, await resp.text(), "list its kernel specs")
                        )
        except (aiohttp.ClientError, TimeoutError) as e:
            raise ExecutorError(ep.explain(e, "reach")) from e
        except ValueError as e:
            raise ExecutorError(f"{ep.url} does not answer like a Jupyter gateway (GET /api: {e}).") from e
        self._up = True

    async def wait(self) -> None:
        """Nothing to wait for: the gateway is not ours."""

    def log_tail(self, lines: int = 15) -> str:
        return f"(the gateway at {self.url} is remote: see its own log)"

    async def stop(self, grace: float = 5.0) -> None:
        """Forget the gateway (it keeps running; our kernel was deleted before)."""
        self._up = False


class RemoteKernelConnection(KernelConnection):
    """A kernel in a remote gateway: created with our variables, watched through the REST API,
    its websocket re-attached when it drops, its in-band requests answered by ``inband``.
    """

    def __init__(
        self,
        gateway: RemoteGateway,
        images_dir: Path,
        on_death: Callable[[str], None],
        inband: InbandHandler,
    ) -> None:
        super().__init__(gateway, images_dir, on_death)
        self.endpoint = gateway.endpoint
        self._inband = inband
        self._attached = asyncio.Event()
        self._attached.set()
        self.reconnects = 0

    async def open(self, init_code: str, init_timeout: float) -> None:
        """Create the kernel, connect, run the env prelude, ``init_code`` and the in-band hooks.

        Raises:
            ExecutorError: The gateway refused or lost the kernel, or the init code failed.
        """
        code = _ENV_PRELUDE + init_code + "\n" + WARM_UP_CODE + INBAND_CODE
        try:
            async with asyncio.timeout(init_timeout):
                await super().open(code, init_timeout + 30)  # ours fires first: the message names the fix
        except TimeoutError:
            raise ExecutorError(
                f"The kernel did not start in the Jupyter gateway at {self.endpoint.url} within "
                f"{init_timeout:g}s: set {REQUEST_TIMEOUT_ENV} to wait longer (on Enterprise Gateway, "
                "also EG_KERNEL_LAUNCH_TIMEOUT, e.g. while nodes pull the kernel image)."
            ) from None

    async def _create_kernel(self) -> None:
        env = kernel_request_env(launch_timeout=self.endpoint.request_timeout)
        env.update({ENV_PREFIX + name: value for name, value in self.gateway.env.items()})
        post = asyncio.create_task(self._post_kernel(env))
        assert isinstance(self.gateway, RemoteGateway)
        GATEWAY_KERNELS.starting(post, self.gateway)
        try:
            self.kernel_id = await asyncio.shield(post)
            GATEWAY_KERNELS.started(self)
        except asyncio.CancelledError:
            # Timed out (or the executor stopped) while the gateway was still starting the kernel:
            # it would run for nobody. Delete it once the gateway says which it is.
            GATEWAY_KERNELS.delete_when_started(post, self.gateway, self.endpoint.request_timeout)
            raise
        except aiohttp.ClientError as e:
            raise ExecutorError(self.endpoint.explain(e, "start a kernel in")) from e

    async def _post_kernel(self, env: dict[str, str]) -> str:
        """``POST …/api/kernels`` on a session of its own: it may outlive this connection."""
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=_CHECK_TIMEOUT)
        async with self.gateway.client_session(timeout) as session:
            async with session.post(f"{self.gateway.base_url}/api/kernels", json={"env": env}) as resp:
                if resp.status not in (200, 201):
                    raise ExecutorError(
                        self.endpoint.explain_status(resp.status, await resp.text(), "start a kernel")
                    )
                return str((await resp.json())["id"])

    async def _connect_ws(self) -> aiohttp.ClientWebSocketResponse:
        try:
            return await super()._connect_ws()
        except aiohttp.WSServerHandshakeError as e:
            raise ExecutorError(
                self.endpoint.explain_status(e.status, e.message, "connect to the kernel")
            ) from e
        except aiohttp.ClientError as e:
            raise ExecutorError(self.endpoint.explain(e, "connect to the kernel in")) from e

    async def execute(
        self,
        code: str,
        sink: CellSink,
        *,
        silent: bool = False,
        user_expressions: dict[str, str] | None = None,
    ) -> str:
        # A socket being re-attached: send once it is back (or the kernel counts as dead).
        await self._attached.wait()
        return await super().execute(code, sink, silent=silent, user_expressions=user_expressions)

    async def _read(self) -> None:
        assert self._ws is not None
        while True:
            reason, kernel_said = await self._pump(self._ws)
            if kernel_said or self.dead or self._closed:
                break
            self._attached.clear()
            try:
                if not await self._reattach(reason):
                    break
            finally:
                self._attached.set()
        self._mark_dead(reason)

    def _note(self, text: str) -> None:
        """Tell the running cells (their output reaches the user and the model)."""
        for cell in list(self._cells.values()):
            cell.out(text)

    async def _reattach(self, reason: str) -> bool:
        """A new websocket to the same kernel (same session: the gateway replays what it buffered).

        Returns:
            Whether it worked within the retry schedule (False: the kernel counts as lost).
        """
        logger.warning("kernel %s: %s; re-attaching", self.kernel_id, reason)
        self._note(f"\n[freeact: {reason}; re-attaching to the kernel…]\n")
        for attempt in range(self.endpoint.retry_max):
            await asyncio.sleep(self.endpoint.retry_delay(attempt))
            if self._closed or self.dead:
                return False
            try:
                async with asyncio.timeout(_CHECK_TIMEOUT):
                    async with self._session.get(self.kernel_url) as resp:
                        if resp.status == 404:
                            self._note("[freeact: the kernel is gone from the gateway]\n")
                            return False
                    ws = await super()._connect_ws()
            except (aiohttp.ClientError, TimeoutError, ConnectionError) as e:
                logger.info("re-attach attempt %d failed: %s", attempt + 1, e)
                continue
            self._ws = ws
            self.reconnects += 1
            self._note(
                "[freeact: re-attached to the same kernel; output printed while disconnected may be missing]\n"
            )
            return True
        self._note(f"[freeact: could not re-attach after {self.endpoint.retry_max} attempts]\n")
        return False

    def _handle(self, msg: dict[str, Any]) -> None:
        if msg.get("msg_type") == "input_request":
            prompt = str(msg.get("content", {}).get("prompt", ""))
            if prompt.startswith(INBAND_PREFIX):
                task = asyncio.create_task(self._answer(msg.get("header", {}), prompt[len(INBAND_PREFIX) :]))
                self._tasks.append(task)
                task.add_done_callback(self._forget_task)
                return
        super()._handle(msg)

    def _forget_task(self, task: asyncio.Task[None]) -> None:
        with contextlib.suppress(ValueError):
            self._tasks.remove(task)

    async def _answer(self, request_header: dict[str, Any], payload: str) -> None:
        """Run an in-band request and send the answer as the ``input_reply``."""
        try:
            reply = await self._inband(json.loads(payload))
        except Exception as e:  # the kernel must get an answer, or it waits forever
            logger.exception("in-band request failed")
            reply = {"error": f"freeact could not handle the request: {e}"}
        message = {
            "header": {
                "msg_id": uuid4().hex,
                "username": "",
                "session": self._session_id,
                "msg_type": "input_reply",
                "version": "5.3",
            },
            "parent_header": request_header,
            "metadata": {},
            "channel": "stdin",
            "buffers": [],
            "content": {"value": json.dumps(reply)},
        }
        await self._attached.wait()
        if self._ws is not None and not self.dead:
            with contextlib.suppress(ConnectionError, RuntimeError, aiohttp.ClientError):
                await self._ws.send_str(json.dumps(message))

    async def close(self, *, delete: bool = True) -> None:
        """Close as ``KernelConnection.close``; make sure the gateway really deleted the kernel.

        A kernel the gateway is restarting fails the first delete (500, a jupyter_client race).
        A remote kernel is always deleted (``delete`` is for gateways that end with the app).
        """
        GATEWAY_KERNELS.closed(self)
        await super().close()
        if self.kernel_id is None or not self.gateway.alive:
            return
        async with self.gateway.client_session(aiohttp.ClientTimeout(total=5)) as session:
            for _ in range(DELETE_ATTEMPTS):
                with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                    async with session.delete(self.kernel_url) as resp:
                        if resp.status in (204, 404):
                            return
                await asyncio.sleep(0.5)

    def held_kernel(self) -> str | None:
        """The id of the gateway kernel this connection still holds (``None``: not started, or closed)."""
        return None if self._closed else self.kernel_id

    def check_alive(self) -> bool:
        """Whether the kernel counts as alive (what the websocket and the last poll said)."""
        return not self.dead and self._ws is not None

    async def _watch_pid(self, pid: int) -> None:
        # `pid` is a process of the remote machine: ask the gateway instead.
        failures = 0
        while not self.dead:
            await asyncio.sleep(_POLL_INTERVAL)
            try:
                async with asyncio.timeout(5):
                    async with self._session.get(self.kernel_url) as resp:
                        if resp.status == 404:
                            self._mark_dead("the kernel is gone from the remote gateway")
                            return
                        model = await resp.json() if resp.status == 200 else {}
                failures = 0
            except (aiohttp.ClientError, TimeoutError, ValueError):
                failures += 1
                # While the socket is being re-attached, the re-attach decides.
                if failures >= _POLL_FAILURES and self._attached.is_set():
                    self._mark_dead("the remote kernel gateway does not answer")
                    return
                continue
            if model.get("execution_state") == "dead":
                self._mark_dead("the remote kernel is dead")
                return


class RemoteExecutor(KernelExecutor):
    """``KernelExecutor`` whose kernel lives in a Jupyter gateway that is already running.

    The local tool server still decides approvals and runs programmatic MCP calls, but the kernel
    reaches it in-band, over its own stdin channel (see the module docstring).

    Args:
        remote_url: ``http(s)://host[:port][/prefix/]`` of the gateway (None: ``JUPYTER_GATEWAY_URL``).
        remote_insecure: Do not verify the gateway's TLS certificate (a warning is logged).
        working_dir: The kernel's working directory; must exist here and on the gateway's machine.
        **kwargs: As ``KernelExecutor``.

    Raises:
        ExecutorError: No gateway URL, a malformed one, or a CA bundle that is not a file.
        ValueError: As ``KernelExecutor``.
    """

    use_kernel_venv = False  # its kernels do not see the host's file system

    def __init__(
        self,
        *,
        remote_url: str | None = None,
        remote_insecure: bool = False,
        working_dir: Path,
        **kwargs: Any,
    ) -> None:
        self.endpoint = resolve_endpoint(remote_url, insecure=remote_insecure)
        # A gateway's kernel may take long to start (a pod, an image pull): JUPYTER_GATEWAY_REQUEST_TIMEOUT.
        kwargs.setdefault("kernel_init_timeout", self.endpoint.request_timeout)
        super().__init__(working_dir=working_dir, **kwargs)
        self.remote_url = self.endpoint.url

    @property
    def kernel_id(self) -> str | None:
        """The gateway's id of the current kernel (None when none runs)."""
        return self._conn.kernel_id if self._conn is not None and not self._conn.dead else None

    def _remote_env(self, env: dict[str, str]) -> dict[str, str]:
        """Only what the remote kernel needs from us: the user's variables and PYTHONPATH.

        Not the tool server's address (the kernel asks in-band), never the gateway token.
        """
        remote = dict(self.kernel_env)
        for name in ("PYTHONPATH", "PYDEVD_DISABLE_FILE_VALIDATION"):
            if name in env:
                remote[name] = env[name]
        return remote

    def _gateway_process(self, port: int, tool_port: int, env: dict[str, str]) -> KernelGatewayProcess:
        return RemoteGateway(endpoint=self.endpoint, working_dir=self.working_dir, env=self._remote_env(env))

    def _kernel_connection(self, gateway: KernelGatewayProcess) -> KernelConnection:
        assert isinstance(gateway, RemoteGateway)
        return RemoteKernelConnection(gateway, self.images_dir, self._on_kernel_death, self._answer_inband)

    def _tool_server_address(self) -> tuple[str, int]:
        # ipybox's handlers name an address; the in-band hooks ignore it. Unroutable on purpose.
        return INBAND_HOST, 9

    async def _warm_up(self) -> None:
        # The warm-up ran with the init code (the in-band hooks need it before any cell).
        self._synced = self._conn is not None and self.approve_shell_cmds

    async def _answer_inband(self, request: dict[str, Any]) -> dict[str, Any]:
        """Decide an approval or run a tool call that the kernel sent in-band."""
        server = await self._tool_server_up()  # a cell may ask while it still comes up
        if server is None:
            return {"error": self._tool_failure or "the executor is stopping"}
        return await answer_inband(server, request)


class GatewayKernels:
    """The kernels this process holds in gateways: deletes those whose start was given up, and every
    one still held when the process quits without stopping its agents (``release``)."""

    def __init__(self) -> None:
        # Connections whose kernel lives in a gateway, and kernel starts under way.
        self.live: weakref.WeakSet[RemoteKernelConnection] = weakref.WeakSet()
        self.starts: dict[asyncio.Task[str], KernelGatewayProcess] = {}
        # Deletions of kernels whose start was given up (kept referenced until done).
        self.abandoned: set[asyncio.Task[None]] = set()

    def starting(self, post: asyncio.Task[str], gateway: KernelGatewayProcess) -> None:
        """``post`` asks ``gateway`` for a kernel: held until it answers."""
        self.starts[post] = gateway
        post.add_done_callback(lambda task: self.starts.pop(task, None))

    def started(self, conn: RemoteKernelConnection) -> None:
        self.live.add(conn)

    def closed(self, conn: RemoteKernelConnection) -> None:
        self.live.discard(conn)

    def delete_when_started(self, post: asyncio.Task[str], gateway: KernelGatewayProcess, wait: float) -> None:
        """Once ``post`` (a kernel start given up) returns the kernel's id, delete that kernel."""

        async def delete() -> None:
            try:
                async with asyncio.timeout(wait + 30):
                    kernel_id = await post
            except (ExecutorError, aiohttp.ClientError, TimeoutError, KeyError, ValueError):
                return  # it never started
            async with gateway.client_session(aiohttp.ClientTimeout(total=5)) as session:
                for _ in range(DELETE_ATTEMPTS):
                    with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                        async with session.delete(f"{gateway.base_url}/api/kernels/{kernel_id}") as resp:
                            if resp.status in (204, 404):
                                logger.info("deleted kernel %s: its start had been given up", kernel_id)
                                return
                    await asyncio.sleep(0.5)

        task = asyncio.create_task(delete())
        self.abandoned.add(task)
        task.add_done_callback(self.abandoned.discard)

    async def release(self, limit: float) -> int:
        """Delete every held kernel, all at once, within ``limit`` seconds; how many were asked to go."""
        held = [(c.gateway, kernel_id) for c in list(self.live) if (kernel_id := c.held_kernel()) is not None]
        starts = list(self.starts.items())  # the gateway may have made these already: wait for their ids

        async def delete(gateway: KernelGatewayProcess, kernel_id: str) -> None:
            with contextlib.suppress(aiohttp.ClientError, TimeoutError, OSError):
                async with gateway.client_session(aiohttp.ClientTimeout(total=limit)) as session:
                    async with session.delete(f"{gateway.base_url}/api/kernels/{kernel_id}"):
                        pass

        async def delete_started(post: asyncio.Task[str], gateway: KernelGatewayProcess) -> None:
            with contextlib.suppress(Exception):
                await delete(gateway, await asyncio.shield(post))

        jobs = [delete(gateway, kernel_id) for gateway, kernel_id in held]
        jobs += [delete_started(post, gateway) for post, gateway in starts]
        if jobs:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(limit):
                    await asyncio.gather(*jobs)
        return len(jobs)


GATEWAY_KERNELS = GatewayKernels()


async def release_remote_kernels(limit: float = 3.0) -> int:
    """Delete every gateway kernel this process still holds, all at once, within ``limit`` seconds.

    For a process that ends without stopping its agents (the app's quick quit): local kernels end by
    their watchdogs once we are gone, a gateway's would run on (on Enterprise Gateway, a pod until
    culled). Returns how many kernels were asked to go.
    """
    return await GATEWAY_KERNELS.release(limit)
