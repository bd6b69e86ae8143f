"""The sandboxed executor: the local executor's gateway and kernels run inside bubblewrap (Linux).

The sandbox sees of the host only a table of system directories (``SYSTEM_DIRS``, ``SYSTEM_ETC``) and
what the kernel runs from, read-only, the working directory read-write and a private ``/tmp``; the
folder's siblings, the homes, ``/opt``, ``/var`` and ``/run`` are absent, and the project's names
(``.git``, ``.freeact``, ``.env``, ``AGENTS.md``, …) stay read-only inside the writable working directory whether they exist or not (``sandbox_protect``); it
has its own network namespace (no network at all, not even the host's loopback), its
own PID namespace, and no capabilities. Two ports cross its border through Unix sockets in a
directory bound into it: the kernel gateway's (inside ``socat`` listens on a socket and connects
to the gateway; outside, a ``StreamBridge`` listens on a host port and connects to that socket)
and the tool server's (the other way round: the kernel's approvals and MCP calls reach the
in-process tool server). Inside ports have the same numbers as outside, so the kernel's init code
and environment are those of the local executor. Missing tools are an error, never a silent
fallback to an unsandboxed kernel.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import psutil

from freeact_tui.execution.base import ExecutorError
from freeact_tui.execution.isolation.bridge import PortBridges
from freeact_tui.execution.isolation.protect import ProtectedNames
from freeact_tui.execution.kernel.client import KernelConnection
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.execution.kernel.gateway_process import GATEWAY_TOKEN_ENV, KernelGatewayProcess
from freeact_tui.execution.kernel.init_code import CODE_PATHS_ENV

_INSTALL_HINT = "install them (Debian/Ubuntu: `apt-get install bubblewrap socat`) or use --execution local"

# Private writable places inside the sandbox for what Jupyter, IPython and matplotlib write at
# start (the host's home is read-only there); the user's kernel_env may point them elsewhere.
_SANDBOX_ENV = {
    "JUPYTER_RUNTIME_DIR": "/tmp/jupyter/runtime",
    "JUPYTER_DATA_DIR": "/tmp/jupyter/data",
    "IPYTHONDIR": "/tmp/ipython",
    "MPLCONFIGDIR": "/tmp/matplotlib",
    "XDG_CACHE_HOME": "/tmp/cache",
}

# Runs first inside the sandbox: the two socket bridges in the background, then the gateway.
_LAUNCHER = """\
mkdir -p "$HOME"
"$1" UNIX-LISTEN:"$2",fork,unlink-early,mode=600 TCP:127.0.0.1:"$3",nodelay &
"$1" TCP-LISTEN:"$4",bind=127.0.0.1,fork,reuseaddr,nodelay UNIX-CONNECT:"$5" &
shift 5
exec "$@"
"""


def sandbox_tools() -> tuple[str, str]:
    """Find ``bwrap`` and ``socat`` on ``PATH``.

    Returns:
        Their paths.

    Raises:
        ExecutorError: One is missing (the message names the packages to install).
    """
    found = {name: shutil.which(name) for name in ("bwrap", "socat")}
    missing = [name for name, path in found.items() if path is None]
    if missing:
        names = " and ".join(f"`{n}`" for n in missing)
        raise ExecutorError(
            f"The sandbox needs bubblewrap (`bwrap`) and `socat`, but {names} "
            f"{'is' if len(missing) == 1 else 'are'} not on PATH: {_INSTALL_HINT}."
        )
    return found["bwrap"] or "", found["socat"] or ""


# What the sandbox sees of the host is this table and nothing else (#42: "nothing not included"): the
# system directories a Python/IPython kernel, a shell and git run from, and of /etc the entries the C
# library, Python, TLS and fonts read (names, no logins: not /etc/environment, not git's or pip's system
# config, which may hold credentials or name programs). Everything else of the host is absent: the
# folder's siblings, the homes (``~/.ssh``, tokens in ``~/.config``: the sandbox's home is its own,
# ``HOME`` below), /opt, /srv, /mnt, /var, /run (the host's Unix sockets: Docker's, D-Bus, agents); the
# bridged ports are the only way out. What the kernel runs from outside the table (this interpreter,
# its venv, the kernel's environment) is bound too (``needed_paths``), read-only.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_ETC = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf", "host.conf", "hosts",
    "localtime", "timezone", "ssl", "ca-certificates", "ca-certificates.conf", "pki", "alternatives", "mime.types",
    "locale.alias", "locale.conf", "default/locale", "fonts", "magic", "magic.mime", "terminfo", "protocols",
    "services", "os-release", "debian_version", "bash.bashrc", "inputrc", "shells",
)  # fmt: skip
_PRIVATE = "/tmp"
"""The sandbox's own empty ``/tmp`` (its home is in it)."""
_SANDBOX_HOME = "/tmp/home"
"""The sandbox's own home directory (created by the launcher, in its private ``/tmp``)."""


def system_binds() -> list[str]:
    """bubblewrap's options for the system table: a directory bound read-only, a top-level symlink
    (``/bin -> usr/bin``) made as the same symlink; what this host lacks is left out."""
    options: list[str] = []
    for name in SYSTEM_DIRS:
        if os.path.islink(name):
            options += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            options += ["--ro-bind", name, name]
    for entry in SYSTEM_ETC:
        path = f"/etc/{entry}"
        if os.path.exists(path):  # a symlink is bound where it leads (``/etc/localtime``)
            options += ["--ro-bind", path, path]
    return options


def _in_system(path: Path) -> bool:
    roots = [Path(d).resolve() for d in SYSTEM_DIRS] + [Path("/etc", e) for e in SYSTEM_ETC]
    return any(path.is_relative_to(root) for root in roots)


def needed_paths(env: Mapping[str, str] | None = None) -> list[Path]:
    """This interpreter's directories (its prefixes, ``sys.path``), the kernel's ``PYTHONPATH`` and
    kernel environment (``VIRTUAL_ENV``, code paths) outside the system table: bound, read-only."""
    env = env or {}
    found: set[Path] = set()
    names = [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix, sys.executable]
    names += [os.path.realpath(sys.executable), *sys.path, *env.get("PYTHONPATH", "").split(os.pathsep)]
    names += [env.get("VIRTUAL_ENV", ""), *env.get(CODE_PATHS_ENV, "").split(os.pathsep)]
    for name in filter(None, names):
        path = Path(name).resolve()
        if path.is_file():
            path = path.parent
        if path.exists() and path != Path("/") and not _in_system(path):
            found.add(path)
    # A directory inside another one bound already is covered by it.
    return sorted(p for p in found if not any(p != q and p.is_relative_to(q) for q in found))


def bwrap_options(
    working_dir: Path, socket_dir: Path, env: Mapping[str, str] | None = None, protected: Sequence[str] = ()
) -> list[str]:
    """bubblewrap's options: the system table and what the kernel runs from read-only (nothing else of
    the host), ``working_dir`` and ``socket_dir`` writable, a private ``/tmp``.

    Args:
        working_dir: The kernel's working directory (bound read-write at the same path).
        socket_dir: The directory of the bridge sockets (bound read-write at the same path).
        env: The kernel's environment (its ``PYTHONPATH`` and ``VIRTUAL_ENV`` stay visible).
        protected: The read-only binds inside ``working_dir`` (``ProtectedNames.options()``).
    """
    options = [
        *system_binds(),
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", _PRIVATE,
    ]  # fmt: skip
    for path in needed_paths(env):
        options += ["--ro-bind", str(path), str(path)]
    options += [
        "--bind", str(socket_dir), str(socket_dir),
        "--bind", str(working_dir), str(working_dir),
    ]  # fmt: skip
    options += protected
    options += [
        # the sandbox's own root (where bubblewrap made the folders above the binds) read-only too:
        # a write outside the folder and /tmp fails, as it would on a host path
        "--remount-ro", "/",
        "--chdir", str(working_dir),
        # user (when possible), pid, net, ipc, uts, cgroup
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
    ]  # fmt: skip
    if os.geteuid() == 0:
        # bwrap run by root keeps every capability inside, enough to undo the read-only mounts.
        options += ["--cap-drop", "ALL"]
    return options


async def check_bwrap(
    bwrap: str,
    working_dir: Path,
    socket_dir: Path,
    env: Mapping[str, str] | None = None,
    protected: Sequence[str] = (),
) -> None:
    """Run Python (does nothing) in a sandbox with the options of the real one.

    Raises:
        ExecutorError: bubblewrap cannot create it here (the message says why).
    """
    process = await asyncio.create_subprocess_exec(
        bwrap,
        *bwrap_options(working_dir, socket_dir, env, protected),
        "--",
        sys.executable,
        "-c",
        "pass",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await process.communicate()
    if process.returncode != 0:
        why = err.decode(errors="replace").strip() or f"exit status {process.returncode}"
        raise ExecutorError(
            f"bubblewrap cannot create a sandbox here ({why}). Usually user namespaces are not "
            "available: for a non-root user they need sysctl kernel.unprivileged_userns_clone=1 "
            "(and on Ubuntu 24.04+ an AppArmor profile for bwrap, or "
            "kernel.apparmor_restrict_unprivileged_userns=0); in a container or another sandbox, "
            "allow nested namespaces. Or use --execution local."
        )


def host_pid(root_pid: int, inner_pid: int) -> int:
    """The host's process id of the process with id ``inner_pid`` in the sandbox below ``root_pid``.

    Raises:
        ExecutorError: No such process below ``root_pid``.
    """
    try:
        below = psutil.Process(root_pid).children(recursive=True)
    except psutil.Error:
        below = []
    for proc in below:
        try:
            with open(f"/proc/{proc.pid}/status") as status:
                ids = next((line.split()[1:] for line in status if line.startswith("NSpid:")), [])
        except OSError:
            continue
        if len(ids) > 1 and ids[-1] == str(inner_pid):
            return proc.pid
    raise ExecutorError(f"The sandboxed kernel (pid {inner_pid} inside) is not running.")


class SandboxGatewayProcess(KernelGatewayProcess):
    """The kernel gateway inside bubblewrap, reachable at ``host:port`` through a socket bridge.

    Args:
        host: Host interface of the bridge (the gateway binds 127.0.0.1 of the sandbox).
        port: Port of the bridge and, inside, of the gateway.
        tool_port: Port of the tool server on the host and, inside, of its bridge.
        working_dir: The only writable host directory in the sandbox.
        env: The environment of the gateway and its kernels.
    """

    def __init__(
        self, *, host: str, port: int, tool_port: int, working_dir: Path, env: dict[str, str]
    ) -> None:
        super().__init__(
            host=host,
            port=port,
            working_dir=working_dir,
            env={**_SANDBOX_ENV, **env, "TMPDIR": "/tmp", "HOME": _SANDBOX_HOME},
        )
        self.tool_port = tool_port
        self._tools: tuple[str, str] | None = None
        self._ports: PortBridges | None = None
        self._protected: ProtectedNames | None = None

    async def start(self) -> None:
        """Check the sandbox tools, open both bridges, spawn the sandboxed gateway.

        Raises:
            ExecutorError: bwrap or socat is missing or cannot work here, or a bridge cannot listen.
        """
        self._tools = sandbox_tools()
        self._ports = PortBridges("freeact-sbx-")
        if self._protected is not None:
            self._protected.cleanup()
        self._protected = ProtectedNames(self.working_dir)
        try:
            await check_bwrap(
                self._tools[0], self.working_dir, self._ports.socket_dir, self.env, self._protected.options()
            )
        except BaseException:
            self._protected.cleanup()
            self._protected = None
            raise
        self.port = await self._ports.open(self.host, self.port, self.tool_port, "sandbox")
        self._protected.end_now = self._end_now
        await super().start()

    token_on_stdin = True  # every process of the sandbox can read the environment of the others

    def process_env(self) -> dict[str, str]:
        # No owner watchdog: bwrap (--die-with-parent) ends the sandbox's init, and with it every
        # process inside, when we die. No token: it goes on stdin.
        return {k: v for k, v in self.env.items() if k != GATEWAY_TOKEN_ENV}

    def command(self) -> list[str]:
        """``bwrap … sh launcher socat … gateway-command``."""
        assert self._tools is not None and self._ports is not None and self._protected is not None
        bwrap, socat = self._tools
        return [
            bwrap,
            *bwrap_options(self.working_dir, self._ports.socket_dir, self.env, self._protected.options()),
            "--",
            "/bin/sh",
            "-c",
            _LAUNCHER,
            "freeact-sandbox",
            socat,
            str(self._ports.gateway_socket),
            str(self.port),
            str(self.tool_port),
            str(self._ports.tool_socket),
            *super().command(),
        ]

    def host_pid(self, inner_pid: int) -> int:
        """The host's id of a process of the sandbox (see ``host_pid``)."""
        if self.pid is None:
            raise ExecutorError("The sandbox is not running.")
        return host_pid(self.pid, inner_pid)

    async def stop(self, grace: float = 5.0) -> None:
        """Stop everything in the sandbox, close the bridges, remove the socket directory."""
        try:
            await self._kill_sandbox(grace)
            await super().stop(grace)
        finally:
            ports, self._ports = self._ports, None
            protected, self._protected = self._protected, None
            if protected is not None:
                protected.cleanup()
            if ports is not None:
                await ports.close()

    def _end_now(self) -> Callable[[float], bool]:
        """Kill the sandbox's init now (see ``_kill_sandbox``, which awaits bwrap's exit after it); the wait
        this returns tells whether the init has ended (the fast exit, ``protect.end_all_now``)."""
        pid = self.pid if self.alive else None
        if pid is None:
            return lambda _limit: True
        inits: list[psutil.Process] = []
        with contextlib.suppress(psutil.Error):
            inits = psutil.Process(pid).children()
            for init in inits:
                init.kill()

        def ended(limit: float) -> bool:
            _gone, alive = psutil.wait_procs(inits, timeout=limit)
            return not alive

        return ended

    async def _kill_sandbox(self, grace: float) -> None:
        """Kill the PID namespace's init (bwrap's child): every process inside ends at once.

        bwrap then reaps it and exits; were bwrap killed first, the init's zombie would wait for
        the host's init to reap it.
        """
        if not self.alive or self.pid is None:
            return
        self._end_now()  # the kill; the wait is bwrap's own exit, below
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(grace):
                await self.wait()


class SandboxKernelConnection(KernelConnection):
    """A kernel connection that watches the kernel by its host process id (it reports its inner one)."""

    async def open(self, init_code: str, init_timeout: float) -> None:
        """Open as ``KernelConnection.open``, then map the kernel's process id to the host's.

        Raises:
            ExecutorError: As ``KernelConnection.open``, or the kernel process cannot be found.
        """
        await super().open(init_code, init_timeout)
        assert self.pid is not None and isinstance(self.gateway, SandboxGatewayProcess)
        # The watcher task started by ``open`` has not run yet; it reads the mapped id (below).
        self.pid = self.gateway.host_pid(self.pid)

    async def _watch_pid(self, pid: int) -> None:
        await super()._watch_pid(self.pid if self.pid is not None else pid)


class SandboxExecutor(KernelExecutor):
    """``KernelExecutor`` whose gateway and kernels run inside a bubblewrap sandbox (Linux only).

    Code can write only to ``working_dir`` and a private ``/tmp``, has no network, and sees no
    host process. ``!cmd`` approvals, programmatic MCP calls (the MCP servers run on the host, as
    configured), output, images, interrupts, timeouts and restarts work as in ``KernelExecutor``.
    Requires ``bwrap`` and ``socat`` on ``PATH``.

    Args:
        working_dir: The kernel's working directory, the only writable host directory.
        **kwargs: As ``KernelExecutor`` (``host`` is always 127.0.0.1).

    Raises:
        ValueError: As ``KernelExecutor``.
    """

    guards_planted_names = True
    """Each action's writes to names that configure code, at any depth, are undone (``planted``)."""

    def __init__(self, *, working_dir: Path, **kwargs: Any) -> None:
        kwargs["host"] = "127.0.0.1"
        super().__init__(working_dir=working_dir, **kwargs)

    def _gateway_process(self, port: int, tool_port: int, env: dict[str, str]) -> KernelGatewayProcess:
        return SandboxGatewayProcess(
            host=self.host, port=port, tool_port=tool_port, working_dir=self.working_dir, env=env
        )

    def _kernel_connection(self, gateway: KernelGatewayProcess) -> KernelConnection:
        return SandboxKernelConnection(gateway, self.images_dir, self._on_kernel_death)
