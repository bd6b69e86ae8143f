"""The remote executor: kernels in an already running Jupyter Kernel Gateway, reached over HTTP.

No gateway process of ours runs; the kernel is created with ``POST /api/kernels`` and deleted on
stop. The gateway lets a client set only ``KERNEL_``-prefixed variables of a new kernel (plus
those in its ``env_whitelist``), so our variables (tool server address, ``PYTHONPATH``, the
user's ``kernel_env``) travel as ``KERNEL_FREEACT_<NAME>`` and the init code copies them back
before ipybox's init runs. There is no local process to watch: death is seen on the websocket
(the gateway's restarter announces ``restarting``/``dead``) and by polling the kernel's REST
model; interrupts go through ``POST …/interrupt``.

Limits: ``remote_url`` is ``http://host:port`` (no TLS, no base path, no auth token);
``working_dir`` must exist on the remote machine too (the kernel changes into it); the kernel
must reach the tool server at ``host:port`` (on another machine use an SSH reverse tunnel, e.g.
``ssh -R PORT:127.0.0.1:PORT`` with a fixed ``tool_server_port``); generated MCP APIs and images
written by code are on the remote machine's file system.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from freeact_tui.execution.base import ExecutorError
from freeact_tui.execution.kernel import KernelExecutor
from freeact_tui.execution.kernel_client import KernelConnection
from freeact_tui.execution.kernel_gateway import KernelGatewayProcess

ENV_PREFIX = "KERNEL_FREEACT_"
_POLL_INTERVAL = 1.0
# Consecutive failed polls before the gateway counts as lost.
_POLL_FAILURES = 3
_DELETE_ATTEMPTS = 10

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


def parse_remote_url(url: str) -> tuple[str, int]:
    """``http://host:port`` -> (host, port).

    Raises:
        ExecutorError: Another scheme, a path, or no host.
    """
    parts = urlsplit(url.strip())
    try:
        port = parts.port or 80
    except ValueError:
        port = -1
    if parts.scheme != "http" or not parts.hostname or parts.path not in ("", "/") or port < 0:
        raise ExecutorError(
            f"remote_url must look like http://HOST:PORT (a Jupyter Kernel Gateway), not {url!r}; "
            "TLS, base paths and tokens are not supported in this version."
        )
    return parts.hostname, port


class RemoteGateway(KernelGatewayProcess):
    """A Jupyter Kernel Gateway run by someone else: checked on start, never spawned or stopped.

    Args:
        url: ``http://host:port`` of the gateway.
        working_dir: The kernel's working directory (on the gateway's machine).
        env: Variables for the kernel (sent as ``KERNEL_FREEACT_<NAME>``).

    Raises:
        ExecutorError: ``url`` is not ``http://host:port``.
    """

    def __init__(self, *, url: str, working_dir: Path, env: dict[str, str]) -> None:
        host, port = parse_remote_url(url)
        super().__init__(host=host, port=port, working_dir=working_dir, env=env)
        self.url = url
        self._up = False

    @property
    def alive(self) -> bool:
        return self._up

    @property
    def pid(self) -> int | None:
        return None

    async def start(self) -> None:
        """Check that a kernel gateway answers at the URL.

        Raises:
            ExecutorError: Nothing answers, or it is not a Jupyter server.
        """
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
                async with session.get(f"{self.base_url}/api") as resp:
                    info = await resp.json(content_type=None) if resp.status == 200 else None
        except (aiohttp.ClientError, TimeoutError, ValueError) as e:
            raise ExecutorError(
                f"Cannot reach the Jupyter Kernel Gateway at {self.url} ({e or type(e).__name__}): start one there "
                "(`jupyter kernelgateway --KernelGatewayApp.ip=HOST --KernelGatewayApp.port=PORT`) "
                "or fix remote_url."
            ) from e
        if not isinstance(info, dict) or "version" not in info:
            raise ExecutorError(f"{self.url} does not answer like a Jupyter Kernel Gateway (GET /api).")
        self._up = True

    async def wait(self) -> None:
        """Nothing to wait for: the gateway is not ours."""

    def log_tail(self, lines: int = 15) -> str:
        return f"(the gateway at {self.url} is remote: see its own log)"

    async def stop(self, grace: float = 5.0) -> None:
        """Forget the gateway (it keeps running; our kernel was deleted before)."""
        self._up = False


class RemoteKernelConnection(KernelConnection):
    """A kernel in a remote gateway: created with our variables, watched through the REST API."""

    async def open(self, init_code: str, init_timeout: float) -> None:
        """Create the kernel, connect, run the env prelude and ``init_code``, start watching.

        Raises:
            ExecutorError: The gateway refused or lost the kernel, or the init code failed.
        """
        await super().open(_ENV_PRELUDE + init_code, init_timeout)

    async def _create_kernel(self) -> None:
        env = {ENV_PREFIX + name: value for name, value in self.gateway.env.items()}
        try:
            async with self._session.post(f"{self.gateway.base_url}/api/kernels", json={"env": env}) as resp:
                if resp.status not in (200, 201):
                    body = await resp.text()
                    raise ExecutorError(
                        f"The remote kernel gateway refused to start a kernel ({resp.status}): {body}"
                    )
                self.kernel_id = (await resp.json())["id"]
        except aiohttp.ClientError as e:
            raise ExecutorError(f"Lost the remote kernel gateway while starting a kernel: {e}") from e

    async def close(self) -> None:
        """Close as ``KernelConnection.close``; make sure the gateway really deleted the kernel.

        A kernel the gateway is restarting fails the first delete (500, a jupyter_client race).
        """
        await super().close()
        if self.kernel_id is None or not self.gateway.alive:
            return
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as session:
            for _ in range(_DELETE_ATTEMPTS):
                with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                    async with session.delete(self.kernel_url) as resp:
                        if resp.status in (204, 404):
                            return
                await asyncio.sleep(0.5)

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
                if failures >= _POLL_FAILURES:
                    self._mark_dead("the remote kernel gateway does not answer")
                    return
                continue
            if model.get("execution_state") == "dead":
                self._mark_dead("the remote kernel is dead")
                return


class RemoteExecutor(KernelExecutor):
    """``KernelExecutor`` whose kernel lives in a Jupyter Kernel Gateway that is already running.

    Approvals and programmatic MCP calls go through the local tool server, which the remote
    kernel must reach at ``host``:``tool_server_port`` (see the module docstring for the limits).

    Args:
        remote_url: ``http://host:port`` of the gateway.
        working_dir: The kernel's working directory; must exist here and on the gateway's machine.
        **kwargs: As ``KernelExecutor``.

    Raises:
        ExecutorError: ``remote_url`` is not ``http://host:port``.
        ValueError: As ``KernelExecutor``.
    """

    def __init__(self, *, remote_url: str, working_dir: Path, **kwargs: Any) -> None:
        parse_remote_url(remote_url)
        super().__init__(working_dir=working_dir, **kwargs)
        self.remote_url = remote_url

    @property
    def kernel_id(self) -> str | None:
        """The gateway's id of the current kernel (None when none runs)."""
        return self._conn.kernel_id if self._conn is not None and not self._conn.dead else None

    def _remote_env(self, env: dict[str, str]) -> dict[str, str]:
        """Only what the remote kernel needs from us: the user's variables, PYTHONPATH, the tool server."""
        remote = dict(self.kernel_env)
        for name in ("PYTHONPATH", "TOOL_SERVER_HOST", "TOOL_SERVER_PORT", "PYDEVD_DISABLE_FILE_VALIDATION"):
            if name in env:
                remote[name] = env[name]
        return remote

    def _gateway_process(self, port: int, tool_port: int, env: dict[str, str]) -> KernelGatewayProcess:
        return RemoteGateway(url=self.remote_url, working_dir=self.working_dir, env=self._remote_env(env))

    def _kernel_connection(self, gateway: KernelGatewayProcess) -> KernelConnection:
        return RemoteKernelConnection(gateway, self.images_dir, self._on_kernel_death)
