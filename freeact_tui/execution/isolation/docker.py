"""The Docker executor: the local executor's gateway and kernels run in a container.

The container has no network at all (``--network none``), a read-only root file system from a
small local image, a private ``/tmp``, no capabilities, memory and process limits, and runs as the
calling user. The host's Python environment (venv and base interpreter) is bind-mounted
read-only at the same paths, the working directory read-write at its own path. As in the sandbox,
two ports cross the border through Unix sockets in a directory bound into the container: the
kernel gateway's (published on a random 127.0.0.1 port of the host by a ``StreamBridge``) and the
in-process tool server's (approvals and MCP calls). Inside, a small Python init process (PID 1)
runs the socket bridges and the gateway and reaps orphans. Missing Docker, daemon or image is an
error saying what to do, never a silent fallback to a local kernel.

``python -m freeact_tui.execution.isolation.docker build-image [--tag TAG]`` builds the default image.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import uuid4

import psutil

from freeact_tui.execution.base import ExecutorError
from freeact_tui.execution.isolation.bridge import PortBridges
from freeact_tui.execution.isolation.docker_image import DEFAULT_IMAGE, build_image, outermost, python_roots
from freeact_tui.execution.isolation.protect import ProtectedNames
from freeact_tui.execution.isolation.sandbox import host_pid
from freeact_tui.execution.kernel.client import KernelConnection
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.execution.kernel.gateway_process import GATEWAY_TOKEN_ENV, KernelGatewayProcess
from freeact_tui.execution.kernel.init_code import CODE_PATHS_ENV
from freeact_tui.execution.orphans import OWNER_LOCK_WATCH, OwnerLock, owner_dead, owner_label

_BUILD_HINT = "build it with `python -m freeact_tui.execution.isolation.docker build-image`"
_INSTALL_HINT = (
    "install Docker (Debian/Ubuntu: `apt-get install docker.io`) and start the daemon "
    "(`systemctl start docker`, or run `dockerd`), or use --execution local"
)

# Writable places inside the container (its root is read-only, the host's home is not there).
_CONTAINER_ENV = {
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "JUPYTER_RUNTIME_DIR": "/tmp/jupyter/runtime",
    "JUPYTER_DATA_DIR": "/tmp/jupyter/data",
    "IPYTHONDIR": "/tmp/ipython",
    "MPLCONFIGDIR": "/tmp/matplotlib",
    "XDG_CACHE_HOME": "/tmp/cache",
}

# Inside: gateway.sock -> the gateway's TCP port; the tool server's TCP port -> tool.sock.
_BRIDGE = """\
import asyncio, os, socket, sys
sock_dir, port, tool_port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except OSError:
        writer.close()
def handler(connect):
    async def handle(reader, writer):
        try:
            up_reader, up_writer = await connect()
        except OSError:
            writer.close()
            return
        for w in (writer, up_writer):
            s = w.get_extra_info('socket')
            if s is not None and s.family == socket.AF_INET:
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        writer.close()
        up_writer.close()
    return handle
async def main():
    gateway_sock = os.path.join(sock_dir, 'gateway.sock')
    await asyncio.start_unix_server(
        handler(lambda: asyncio.open_connection('127.0.0.1', port)), gateway_sock)
    os.chmod(gateway_sock, 0o600)
    await asyncio.start_server(
        handler(lambda: asyncio.open_unix_connection(os.path.join(sock_dir, 'tool.sock'))),
        '127.0.0.1', tool_port, reuse_address=True)
    await asyncio.Event().wait()
asyncio.run(main())
"""

# PID 1 of the container: starts the bridge and the gateway, forwards signals, reaps orphans,
# and exits (ending the container) when the gateway does, or when the app that holds the owner
# lock is gone (it cannot see our pids, nor we its).
_INIT = (
    OWNER_LOCK_WATCH
    + """\
import json, os, signal, subprocess, sys, threading, time
cfg = json.loads(sys.argv[1])
def watch_owner():
    while not _freeact_owner_gone(cfg['owner_lock']):
        time.sleep(0.5)
    os._exit(1)
threading.Thread(target=watch_owner, daemon=True).start()
bridge = subprocess.Popen([sys.executable, '-c', cfg['bridge'], *cfg['bridge_args']], stdin=subprocess.DEVNULL)
gateway = subprocess.Popen(cfg['gateway'])  # reads its token from the container's stdin
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(s, lambda n, f: gateway.send_signal(n))
while True:
    pid, status = os.wait()
    if pid == gateway.pid:
        bridge.kill()
        code = os.waitstatus_to_exitcode(status)
        sys.exit(code if code >= 0 else 128 - code)
"""
)


def docker_cli() -> str:
    """The ``docker`` command on PATH.

    Raises:
        ExecutorError: There is none (the message says what to install).
    """
    found = shutil.which("docker")
    if found is None:
        raise ExecutorError(
            f"The docker execution mode needs the `docker` command, which is not on PATH: {_INSTALL_HINT}."
        )
    return found


async def _docker(docker: str, *args: str, limit: float = 30) -> tuple[int, str]:
    """Run a docker command; its exit status and output (stdout and stderr)."""
    process = await asyncio.create_subprocess_exec(
        docker,
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        async with asyncio.timeout(limit):
            out, _ = await process.communicate()
    except TimeoutError:
        process.kill()
        await process.wait()
        return -1, f"`docker {args[0]}` did not answer within {limit:g}s"
    assert process.returncode is not None
    return process.returncode, out.decode(errors="replace").strip()


async def check_docker(docker: str, image: str) -> None:
    """Check that the daemon answers and has ``image``.

    Raises:
        ExecutorError: The daemon is not reachable or the image is missing (the message says what to do).
    """
    status, out = await _docker(docker, "version", "--format", "{{.Server.Version}}")
    if status != 0:
        hint = _INSTALL_HINT
        if "permission denied" in out.lower():
            hint = "add your user to the `docker` group (then log in again), or use --execution local"
        raise ExecutorError(
            f"The Docker daemon is not reachable ({out.splitlines()[-1] if out else status}): {hint}."
        )
    status, out = await _docker(docker, "image", "inspect", "--format", "{{.Id}}", image)
    if status != 0:
        raise ExecutorError(
            f"The Docker image {image!r} does not exist: {_BUILD_HINT} "
            f"(add `--tag {image}` for another name), or set docker_image to an image that has /bin/sh "
            "and the libraries of this machine's Python."
        )


async def reap_orphaned_containers(docker: str) -> list[str]:
    """Remove kernel containers whose app is gone (one killed by SIGKILL, say); their names."""
    status, out = await _docker(
        docker, "ps", "--all", "--filter", "label=freeact-tui=kernel",
        "--format", '{{.Names}} {{.Label "freeact-tui.owner"}}',
    )  # fmt: skip
    # Containers of other versions have no owner label: they are not ours to judge.
    orphans = [n for n, _, owner in (x.partition(" ") for x in out.splitlines()) if owner_dead(owner)]
    if status == 0 and orphans:
        await _docker(docker, "rm", "--force", *orphans)
    return orphans if status == 0 else []


class DockerGatewayProcess(KernelGatewayProcess):
    """The kernel gateway in a Docker container, reachable at ``host:port`` through a socket bridge.

    Args:
        host: Host interface of the bridge (the gateway binds 127.0.0.1 of the container).
        port: Port of the bridge and, inside, of the gateway.
        tool_port: Port of the tool server on the host and, inside, of its bridge.
        working_dir: Bound read-write at the same path; the gateway's working directory.
        env: The environment of the gateway and its kernels.
        image: The image to run.
        read_only: Host directories bound read-only at the same paths (the Python environment).
        memory: Memory limit (``docker run --memory``), or None.
        pids_limit: Process limit (``docker run --pids-limit``), or None.
    """

    def __init__(
        self,
        *,
        host: str,
        port: int,
        tool_port: int,
        working_dir: Path,
        env: dict[str, str],
        image: str,
        read_only: list[Path],
        memory: str | None,
        pids_limit: int | None,
    ) -> None:
        super().__init__(host=host, port=port, working_dir=working_dir, env={**env, **_CONTAINER_ENV})
        self.tool_port = tool_port
        self.image = image
        self.read_only = read_only
        self.memory = memory
        self.pids_limit = pids_limit
        self.container_name = f"freeact-tui-{uuid4().hex[:12]}"
        self._docker: str | None = None
        self._ports: PortBridges | None = None
        self._owner_lock: OwnerLock | None = None
        self._root_pid: int | None = None
        self._protected: ProtectedNames | None = None

    @property
    def alive(self) -> bool:
        # The docker CLI notices the container's end a little later than we can.
        if not super().alive:
            return False
        if self._root_pid is None:
            return True
        try:
            return bool(psutil.Process(self._root_pid).status() != psutil.STATUS_ZOMBIE)
        except psutil.NoSuchProcess:
            return False

    async def start(self) -> None:
        """Check Docker and the image, open both bridges, run the container.

        Raises:
            ExecutorError: Docker, its daemon or the image is missing, or a bridge cannot listen.
        """
        self._docker = docker_cli()
        await check_docker(self._docker, self.image)
        await reap_orphaned_containers(self._docker)
        self.container_name = f"freeact-tui-{uuid4().hex[:12]}"
        self._root_pid = None
        self._ports = PortBridges("freeact-dkr-")
        # Held while the container runs; the container ends when it can take it (we are gone).
        self._owner_lock = OwnerLock(self._ports.socket_dir / "owner.lock")
        self.port = await self._ports.open(self.host, self.port, self.tool_port, "container")
        if self._protected is not None:
            self._protected.cleanup()
        self._protected = ProtectedNames(self.working_dir)  # the sandbox's table of read-only names
        self._protected.end_now = self._end_now
        try:
            await super().start()
        except BaseException:
            self._protected.cleanup()
            self._protected = None
            raise

    token_on_stdin = True  # every process of the container can read the environment of the others

    def process_env(self) -> dict[str, str]:
        # The docker CLI needs the user's own environment; the kernel's variables travel as `-e NAME`.
        return {**os.environ, **{k: v for k, v in self._kernel_env().items() if k not in _CONTAINER_ENV}}

    def _kernel_env(self) -> dict[str, str]:
        """The container's variables: no gateway token (it goes on stdin)."""
        return {k: v for k, v in self.env.items() if k != GATEWAY_TOKEN_ENV}

    def command(self) -> list[str]:
        """``docker run … python init bridge gateway-command``."""
        assert self._docker is not None and self._ports is not None and self._protected is not None
        socket_dir = self._ports.socket_dir
        options = [
            "--rm", "--interactive", "--name", self.container_name, "--label", "freeact-tui=kernel",
            "--label", f"freeact-tui.owner={owner_label()}",
            "--network", "none", "--read-only", "--tmpfs", "/tmp:rw,nosuid,nodev,mode=1777",
            "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
            "--user", f"{os.getuid()}:{os.getgid()}", "--workdir", str(self.working_dir),
            "--volume", f"{self.working_dir}:{self.working_dir}:rw",
            "--volume", f"{socket_dir}:{socket_dir}:rw",
        ]  # fmt: skip
        options += self._protected.docker_options()  # after the folder's own bind: they cover names in it
        for path in self.read_only:
            options += ["--volume", f"{path}:{path}:ro"]
        if self.memory:
            options += ["--memory", self.memory, "--memory-swap", self.memory]
        if self.pids_limit:
            options += ["--pids-limit", str(self.pids_limit)]
        env = self._kernel_env()
        for name in sorted(env):
            options += ["--env", f"{name}={env[name]}" if name in _CONTAINER_ENV else name]
        init = {
            "bridge": _BRIDGE,
            "bridge_args": [str(socket_dir), str(self.port), str(self.tool_port)],
            "owner_lock": str(socket_dir / "owner.lock"),
            "gateway": super().command(),
        }
        return [self._docker, "run", *options, self.image, sys.executable, "-c", _INIT, json.dumps(init)]

    async def host_pid(self, inner_pid: int) -> int:
        """The host's id of a process of the container.

        Raises:
            ExecutorError: The container or the process is not running.
        """
        if self._root_pid is None:
            assert self._docker is not None
            status, out = await _docker(
                self._docker, "inspect", "--format", "{{.State.Pid}}", self.container_name
            )
            if status != 0 or not out.isdigit() or out == "0":
                raise ExecutorError(f"The kernel container is not running ({out}).")
            self._root_pid = int(out)
        return host_pid(self._root_pid, inner_pid)

    def _end_now(self) -> Callable[[float], bool]:
        """Remove the container now (``docker rm --force``); the wait tells whether it is gone."""
        if self._docker is None:
            return lambda _limit: True
        removing = subprocess.Popen(
            [self._docker, "rm", "--force", self.container_name],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip

        def ended(limit: float) -> bool:
            try:
                return removing.wait(limit) == 0
            except subprocess.TimeoutExpired:
                return False

        return ended

    async def stop(self, grace: float = 5.0) -> None:
        """Remove the container (everything in it ends), close the bridges, remove the socket directory."""
        try:
            if self._docker is not None and self.pid is not None:
                await _docker(self._docker, "rm", "--force", self.container_name, limit=max(grace, 10))
            await super().stop(grace)
        finally:
            lock, self._owner_lock = self._owner_lock, None
            if lock is not None:
                lock.release()
            ports, self._ports = self._ports, None
            if ports is not None:
                await ports.close()
            protected, self._protected = self._protected, None
            if protected is not None:
                protected.cleanup()


class DockerKernelConnection(KernelConnection):
    """A kernel connection that watches the kernel by its host process id (it reports its inner one)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._mapped = asyncio.Event()

    async def open(self, init_code: str, init_timeout: float) -> None:
        """Open as ``KernelConnection.open``, then map the kernel's process id to the host's.

        Raises:
            ExecutorError: As ``KernelConnection.open``, or the kernel process cannot be found.
        """
        await super().open(init_code, init_timeout)
        assert self.pid is not None and isinstance(self.gateway, DockerGatewayProcess)
        self.pid = await self.gateway.host_pid(self.pid)
        self._mapped.set()

    async def _watch_pid(self, pid: int) -> None:
        # Started by ``open`` with the inner id; the mapping needs `docker inspect` first.
        await self._mapped.wait()
        await super()._watch_pid(self.pid if self.pid is not None else pid)


class DockerExecutor(KernelExecutor):
    """``KernelExecutor`` whose gateway and kernels run in a Docker container.

    Code can write only to ``working_dir`` and a private ``/tmp``, has no network, and sees no
    host process; ``!cmd`` runs with the image's commands. Approvals, programmatic MCP calls (the
    MCP servers run on the host), output, images, interrupts, timeouts and restarts work as in
    ``KernelExecutor``. Needs a local Docker daemon (the container must see this machine's files
    and sockets) and an image with a shell and the libraries of this machine's Python.

    Args:
        working_dir: The kernel's working directory, the only writable host directory.
        image: The image (default: the one ``build-image`` makes).
        memory: Memory limit of the container (``docker run --memory``), None for none.
        pids_limit: Process limit of the container, None for none.
        **kwargs: As ``KernelExecutor`` (``host`` is always 127.0.0.1).

    Raises:
        ValueError: As ``KernelExecutor``.
    """

    use_kernel_venv = False  # its kernels do not see the host's file system
    guards_planted_names = True
    """The folder is bind-mounted read-write below its read-only protected names: each action's writes to
    names that configure code, at any depth, are undone (``planted``), as in the sandbox."""

    def __init__(
        self,
        *,
        working_dir: Path,
        image: str = DEFAULT_IMAGE,
        memory: str | None = "4g",
        pids_limit: int | None = 1024,
        **kwargs: Any,
    ) -> None:
        kwargs["host"] = "127.0.0.1"
        super().__init__(working_dir=working_dir, **kwargs)
        self.image = image
        self.memory = memory
        self.pids_limit = pids_limit

    @property
    def container_name(self) -> str | None:
        """Name of the current container (None when none runs)."""
        gateway = self._gateway
        return gateway.container_name if isinstance(gateway, DockerGatewayProcess) and gateway.alive else None

    def _read_only_mounts(self, env: dict[str, str]) -> list[Path]:
        pythonpath = [Path(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        # The generated root and the manifest's directory (``code_finder`` reads both): read-only.
        code = [Path(p) for p in env.get(CODE_PATHS_ENV, "").split(os.pathsep) if p]
        found = outermost([*python_roots(), *self.extra_pythonpath, *pythonpath, *code])
        # The working directory is bound read-write already.
        return [p for p in found if not p.is_relative_to(self.working_dir)]

    def _gateway_process(self, port: int, tool_port: int, env: dict[str, str]) -> KernelGatewayProcess:
        return DockerGatewayProcess(
            host=self.host,
            port=port,
            tool_port=tool_port,
            working_dir=self.working_dir,
            env=env,
            image=self.image,
            read_only=self._read_only_mounts(env),
            memory=self.memory,
            pids_limit=self.pids_limit,
        )

    def _kernel_connection(self, gateway: KernelGatewayProcess) -> KernelConnection:
        return DockerKernelConnection(gateway, self.images_dir, self._on_kernel_death)


def main(argv: list[str] | None = None) -> int:
    """``build-image [--tag TAG]``: build the docker mode's image from this machine's files."""
    parser = argparse.ArgumentParser(prog="python -m freeact_tui.execution.isolation.docker")
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build-image", help="build the kernel image with `docker import`")
    build.add_argument("--tag", default=DEFAULT_IMAGE, help=f"image name (default: {DEFAULT_IMAGE})")
    args = parser.parse_args(argv)
    try:
        docker = docker_cli()
        asyncio.run(build_image(args.tag, docker))
    except ExecutorError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"built {args.tag}")
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
