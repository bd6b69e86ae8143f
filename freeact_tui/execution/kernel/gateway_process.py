"""A Jupyter Kernel Gateway subprocess that hosts the kernels (its own process group, autorestart off)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import signal
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
import psutil

from freeact_tui.execution.base import ExecutorError
from freeact_tui.execution.deferred_imports import GATEWAY_SOURCE
from freeact_tui.execution.kernel.spare_gateway import (
    INHERITED_ENV,
    NODELAY_PATCH,
    AdoptedProcess,
    SpareGateway,
)
from freeact_tui.execution.kernel.venv import KERNEL_NAME, KernelVenv
from freeact_tui.execution.orphans import OWNER_ENV, OWNER_WATCH

logger = logging.getLogger(__name__)

# Seconds the kernels get to end on SIGTERM when the gateway stops, before they are killed.
_KERNEL_GRACE = 0.5

# The gateway's auth token travels in this variable (never on a command line, which any user can
# read); the gateway takes it out of its environment before it starts a kernel. Without the variable it
# reads the token as the first line of its stdin (``token_on_stdin``: a process environment stays readable
# in /proc by the processes beside it, which in the sandbox are the kernels).
GATEWAY_TOKEN_ENV = "FREEACT_GATEWAY_TOKEN"  # noqa: S105 - the name of a variable, not a secret

# The token is appended to the settings from the environment (see GATEWAY_TOKEN_ENV), then the
# websocket gets TCP_NODELAY (see NODELAY_PATCH). It first starts a watchdog: orphaned (the app
# died, even by SIGKILL), it kills its kernels and exits.
_GATEWAY_MAIN = (
    OWNER_WATCH
    + f"""\
import os as _os, sys as _sys
_token = _os.environ.pop({GATEWAY_TOKEN_ENV!r}, None)
_sys.argv.append('--KernelGatewayApp.auth_token=' + (_sys.stdin.readline().strip() if _token is None else _token))
del _token
"""
    + GATEWAY_SOURCE
    + NODELAY_PATCH
    + """\
from kernel_gateway.gatewayapp import launch_instance
launch_instance()
"""
)


def kernel_environment(
    kernel_env: dict[str, str],
    extra_pythonpath: list[Path],
    host: str,
    tool_port: int,
    venv: KernelVenv | None = None,
) -> dict[str, str]:
    """The whole environment of the gateway and its kernels (only a few variables are inherited).

    Args:
        kernel_env: Extra variables given by the user.
        extra_pythonpath: Directories put first on ``PYTHONPATH`` (generated MCP APIs).
        host: Interface of the tool server.
        tool_port: Port of the tool server.
        venv: The kernel environment kernels run from (None: the app's own interpreter).
    """
    env = {k: os.environ[k] for k in INHERITED_ENV if k in os.environ}
    if venv is not None:
        # Kernels start from the kernel environment's spec; its `bin` first makes `!pip` its pip.
        env["PATH"] = venv.path_env(env.get("PATH"))
        env["VIRTUAL_ENV"] = str(venv.root)
        env["JUPYTER_PATH"] = str(venv.jupyter_dir)
        env["KG_FORCE_KERNEL_NAME"] = KERNEL_NAME
    env.update(kernel_env)
    pythonpath = [str(p.resolve()) for p in extra_pythonpath]
    if env.get("PYTHONPATH"):
        pythonpath.append(env["PYTHONPATH"])
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(pythonpath)
    # Generated MCP APIs find the tool server through these.
    env["TOOL_SERVER_HOST"] = host
    env["TOOL_SERVER_PORT"] = str(tool_port)
    # Silences debugpy's "frozen modules" warning that every new kernel prints.
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    # The gateway and the kernel launcher (`python -m ipykernel_launcher`) would put the working
    # dir first on sys.path, so a repo's `threading.py` ran in them; the kernel's init takes it out.
    env["PYTHONSAFEPATH"] = "1"
    return env


class KernelGatewayProcess:
    """A ``jupyter kernelgateway`` subprocess in its own process group, autorestart off.

    It accepts only requests that carry ``token`` (random per gateway; ``client_session`` sends it),
    so no other user of the machine can start kernels in it.

    Args:
        host: Interface to bind.
        port: Port to listen on.
        working_dir: Working directory of the gateway (and so of its kernels).
        env: The whole environment of the gateway and its kernels (nothing is inherited).
        spare: A gateway process spawned at launch (``spare_gateway``), to become this gateway on
            its first start instead of a new process.
    """

    token_on_stdin = False
    """The token goes to the process on its stdin, not in its environment (see ``GATEWAY_TOKEN_ENV``)."""

    def __init__(
        self,
        *,
        host: str,
        port: int,
        working_dir: Path,
        env: dict[str, str],
        spare: SpareGateway | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.working_dir = working_dir
        self.token = secrets.token_urlsafe(32)
        self.env = {**env, GATEWAY_TOKEN_ENV: self.token}
        self._process: asyncio.subprocess.Process | AdoptedProcess | None = None
        self._log_path: Path | None = None
        self._spare = spare

    @property
    def base_url(self) -> str:
        """Where the REST API is (``<base_url>/api/...``)."""
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:
        """``base_url`` for websockets."""
        return f"ws://{self.host}:{self.port}"

    def client_session(self, timeout: aiohttp.ClientTimeout) -> aiohttp.ClientSession:
        """An HTTP session whose requests carry this gateway's token (a remote one: its own token and TLS)."""
        return aiohttp.ClientSession(timeout=timeout, headers={"Authorization": f"token {self.token}"})

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.returncode is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def start(self) -> None:
        """Spawn the gateway; it accepts requests shortly after (see ``KernelConnection.open``).

        Raises:
            ExecutorError: The gateway cannot be spawned.
        """
        spare, self._spare = self._spare, None
        if spare is not None:
            env = {k: v for k, v in self.env.items() if k != GATEWAY_TOKEN_ENV}
            argv = [*self.settings(), f"--KernelGatewayApp.auth_token={self.token}"]
            if spare.configure(cwd=self.working_dir, env=env, argv=argv):
                self._process, self._log_path = AdoptedProcess(spare.process), spare.log_path
                return
            spare.kill()
        cmd = self.command()
        fd, log_name = tempfile.mkstemp(prefix="freeact-tui-gateway-", suffix=".log")
        self._log_path = Path(log_name)
        try:
            self._process = process = await asyncio.create_subprocess_exec(
                *cmd,
                cwd=self.working_dir,
                env=self.process_env(),
                stdin=asyncio.subprocess.PIPE if self.token_on_stdin else asyncio.subprocess.DEVNULL,
                stdout=fd,
                stderr=fd,
                start_new_session=True,
            )
            if process.stdin is not None:
                process.stdin.write(self.token.encode() + b"\n")
                with contextlib.suppress(ConnectionError):
                    await process.stdin.drain()
                process.stdin.close()
        except OSError as e:
            raise ExecutorError(f"Cannot start the Jupyter kernel gateway ({cmd[0]}): {e}") from e
        finally:
            os.close(fd)

    def process_env(self) -> dict[str, str]:
        """The environment of the process ``command()`` starts (a wrapper may need its own).

        It names this process as the gateway's owner: the gateway ends when its parent is another.
        """
        return {**self.env, OWNER_ENV: str(os.getpid())}

    def command(self) -> list[str]:
        """The command line that runs the gateway (a subclass may wrap it, e.g. in a sandbox)."""
        # -P: not the working dir on sys.path (PYTHONSAFEPATH, for a wrapper that drops the env)
        return [sys.executable, "-P", "-c", _GATEWAY_MAIN, *self.settings()]

    def settings(self) -> list[str]:
        """The gateway's settings, as command-line options (the token is added apart)."""
        return [
            f"--KernelGatewayApp.ip={self.host}",
            f"--KernelGatewayApp.port={self.port}",
            "--KernelGatewayApp.port_retries=0",
            "--KernelGatewayApp.answer_yes=True",
            "--KernelGatewayApp.log_level=WARN",
            # We detect death ourselves and restart with our init code; the gateway's own restart
            # would silently hand us a fresh kernel without it.
            "--KernelManager.autorestart=False",
            # The server's IOPub rate limits drop output past 1 MB/s and tell the kernel's user to
            # restart it with other settings: output is ours to bound (the result keeps head and tail,
            # the whole text goes to tool-results/), so nothing is dropped on the way.
            "--ZMQChannelsWebsocketConnection.iopub_data_rate_limit=0",
            "--ZMQChannelsWebsocketConnection.iopub_msg_rate_limit=0",
        ]

    async def wait(self) -> None:
        """Wait for the gateway process to exit (returns at once when none runs)."""
        if self._process is not None:
            await self._process.wait()

    def log_tail(self, lines: int = 15) -> str:
        """The last lines the gateway wrote (for error messages)."""
        if self._log_path is None or not self._log_path.exists():
            return ""
        text = self._log_path.read_text(errors="replace").strip().splitlines()
        return "\n".join(text[-lines:])

    async def stop(self, grace: float = 5.0) -> None:
        """Terminate the gateway and every process below it (kernels and their children)."""
        if self._spare is not None:  # never started: the spare is ours to end
            self._spare.kill()
            self._spare = None
        process, self._process = self._process, None
        if process is not None:
            children: list[psutil.Process] = []
            with contextlib.suppress(psutil.Error):
                children = psutil.Process(process.pid).children(recursive=True)
            files = [f for f in map(_connection_file, children) if f is not None]
            for proc in children:
                with contextlib.suppress(psutil.Error):
                    proc.terminate()
            # A busy kernel may take seconds to act on SIGTERM; Esc must end a subagent's at once.
            _, alive = await asyncio.to_thread(psutil.wait_procs, children, min(grace, _KERNEL_GRACE))
            for proc in alive:
                with contextlib.suppress(psutil.Error):
                    proc.kill()
            # Its kernels are gone, so nothing is left for it to shut down: a SIGTERM would have it
            # spend ~2 s on its own shutdown.
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            # The gateway itself is reaped by asyncio (reaping it here would confuse its child watcher).
            for name in files:  # what the gateway's own shutdown would have removed
                with contextlib.suppress(OSError):
                    os.unlink(name)
            # Anything left in the gateway's process group (e.g. a `!sleep` started by the kernel).
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                await process.wait()
        if self._log_path is not None:
            self._log_path.unlink(missing_ok=True)
            self._log_path = None

    def kill_kernel(self, pid: int) -> None:
        """SIGKILL kernel ``pid`` and its process group, if it is a process of this gateway.

        Asked to shut down, a kernel that ignores signals holds the gateway for its whole grace (5 s).
        A kernel in another pid namespace (sandbox, container) or behind a remote gateway is left to it.
        """
        if self.pid is None:
            return
        try:
            if pid not in {p.pid for p in psutil.Process(self.pid).children(recursive=True)}:
                return
            group = os.getpgid(pid)
        except (psutil.Error, OSError):
            return
        with contextlib.suppress(OSError):
            # Its own group (a kernel's session): the commands it started go with it.
            os.killpg(group, signal.SIGKILL) if group == pid else os.kill(pid, signal.SIGKILL)


async def reopen_kernel(
    gateway: KernelGatewayProcess,
    connect: Callable[[KernelGatewayProcess], Awaitable[None]],
    stopping: Callable[[], bool],
) -> None:
    """A new kernel through ``connect(gateway)``, in a new gateway if the last one has ended (a restart).

    ``stopping()`` says whether the executor stops (then a gateway that died meanwhile stays dead).
    """
    was_alive = gateway.alive
    if not was_alive:
        await gateway.stop()
        await gateway.start()
    try:
        await connect(gateway)
    except ExecutorError:
        # A gateway that dies with its kernel (the sandbox or container ends) is reaped a little
        # after the kernel's death is seen: it looked alive above, so start a new one, once.
        if not was_alive or gateway.alive or stopping():
            raise
        logger.info("the kernel gateway ended with its kernel; starting a new one")
        await gateway.stop()
        await gateway.start()
        await connect(gateway)


def _connection_file(proc: psutil.Process) -> str | None:
    """The ``-f kernel-….json`` connection file of a kernel process (None for any other process)."""
    try:
        args = proc.cmdline()
    except psutil.Error:
        return None
    name = args[args.index("-f") + 1] if "-f" in args[:-1] else ""
    base = os.path.basename(name)
    return name if base.startswith("kernel-") and base.endswith(".json") else None
