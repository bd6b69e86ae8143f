"""The real CLI in a terminal: however it ends (SIGHUP, SIGTERM, SIGINT, SIGKILL), no process is left.

Each test starts ``freeact-tui --model test`` in a pseudo-terminal with its own home, waits until
its kernels run, records every descendant (pid and start time), signals the app and counts the
recorded processes still alive.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import pty
import shutil
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import psutil
import pytest

from freeact_tui.execution.docker import reap_orphaned_containers
from freeact_tui.execution.docker_image import build_image
from freeact_tui.execution.orphans import OwnerLock, die_with_parent, owner_gone, owner_label
from tests.test_docker import DAEMON_PROBLEM, IMAGE

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]

START_LIMIT = 150.0  # seconds until the kernels run (a loaded machine is slow)
ORPHAN_LIMIT = 5.0  # seconds the children may outlive the app
QUIT_LIMIT = 40.0  # seconds a clean quit may take under load

needs_sandbox = pytest.mark.skipif(
    (shutil.which("bwrap") is None or shutil.which("socat") is None) and not os.environ.get("CI"),
    reason="bwrap or socat not installed (Debian packages: bubblewrap, socat)",
)


class TerminalApp:
    """``freeact-tui`` running in a pseudo-terminal (its output drained in a thread)."""

    def __init__(self, tmp_path: Path, execution: str, project_config: str = "") -> None:
        home = tmp_path / "home"
        work = tmp_path / "work"
        home.mkdir()
        work.mkdir()
        (work / ".freeact-tui.toml").write_text(project_config)
        env = {
            **os.environ,
            "HOME": str(home),
            "FREEACT_TUI_HOME": str(home / "app"),
            "TERM": "xterm-256color",
        }
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        cmd = [sys.executable, "-m", "freeact_tui", "--trust", "--model", "test", "--execution", execution]
        self.process = subprocess.Popen(
            cmd, stdin=slave, stdout=slave, stderr=slave, cwd=work, env=env, start_new_session=True
        )
        os.close(slave)
        self._master_open = True
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        try:
            while os.read(self.master, 65536):
                pass
        except OSError:
            pass

    def close_terminal(self) -> None:
        if self._master_open:
            self._master_open = False
            os.close(self.master)

    def descendants(self) -> dict[int, float]:
        """Every process below the app: pid -> start time."""
        found: dict[int, float] = {}
        try:
            below = psutil.Process(self.process.pid).children(recursive=True)
        except psutil.Error:
            return found
        for proc in below:
            try:
                found[proc.pid] = proc.create_time()
            except psutil.Error:
                pass
        return found

    def kernels(self, below: dict[int, float]) -> int:
        """How many kernels run below the app."""
        return sum("ipykernel" in _cmdline(pid) for pid in below)

    def wait_for_kernels(self, count: int, also: str = "") -> dict[int, float]:
        """Wait until ``count`` kernels (and a process whose command line has ``also``) run and nothing
        new starts for a second; the descendants then."""
        deadline = time.monotonic() + START_LIMIT
        last: dict[int, float] = {}
        steady_since = time.monotonic()
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"the app ended early (status {self.process.returncode})"
            now = self.descendants()
            if set(now) != set(last):
                last, steady_since = now, time.monotonic()
            elif self.kernels(now) >= count and any(also in _cmdline(pid) for pid in now):
                if time.monotonic() - steady_since >= 1.0:
                    return now
            time.sleep(0.2)
        raise AssertionError(f"{count} kernels did not start within {START_LIMIT:g}s: {_describe(last)}")

    def stop(self) -> None:
        self.close_terminal()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def _cmdline(pid: int) -> str:
    try:
        return " ".join(psutil.Process(pid).cmdline())
    except psutil.Error:
        return ""


def _describe(procs: dict[int, float] | list[int]) -> str:
    return "; ".join(f"{pid}: {_cmdline(pid)[:80]}" for pid in procs) or "none"


def alive(recorded: dict[int, float]) -> list[int]:
    """The recorded processes that still run (same pid and start time, not a zombie)."""
    left = []
    for pid, started in recorded.items():
        try:
            proc = psutil.Process(pid)
            if proc.create_time() == started and proc.status() != psutil.STATUS_ZOMBIE:
                left.append(pid)
        except psutil.Error:
            pass
    return left


def wait_gone(recorded: dict[int, float], limit: float) -> tuple[list[int], float]:
    """Poll until no recorded process runs or ``limit`` seconds pass; what is left and the time taken."""
    started = time.monotonic()
    left = alive(recorded)
    while left and time.monotonic() - started < limit:
        time.sleep(0.1)
        left = alive(recorded)
    return left, time.monotonic() - started


def _kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            psutil.Process(pid).kill()
        except psutil.Error:
            pass


# An MCP server for JSON tool calls: the app starts it at launch.
CALC_SERVER = f"""
[mcp_servers.calc]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(Path(__file__).parent / "mcp_servers" / "calc.py"))}]
mode = "json"
"""


def check_signal(tmp_path: Path, execution: str, kernels: int, signum: signal.Signals) -> None:
    # Without a warm pool the app runs one kernel (the main agent's), with one two.
    config = "subagent_pool_size = 0\n" if kernels == 1 else ""
    app = TerminalApp(tmp_path, execution, config + CALC_SERVER)
    recorded: dict[int, float] = {}
    try:
        recorded = app.wait_for_kernels(kernels, also="calc.py")
        os.kill(app.process.pid, signum)
        if signum == signal.SIGHUP:
            app.close_terminal()  # the terminal is gone, as when its window closes
        if signum != signal.SIGKILL:
            # A clean quit: the app ends by itself (status 0, not killed by the signal).
            assert app.process.wait(QUIT_LIMIT) == 0
        left, took = wait_gone(recorded, ORPHAN_LIMIT)
        assert not left, f"left {len(left)} of {len(recorded)} after {took:.1f}s: {_describe(left)}"
    finally:
        app.stop()
        _kill(alive(recorded))


@pytest.mark.parametrize(
    "signum", [signal.SIGHUP, signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=lambda s: s.name
)
def test_local_app_leaves_no_process(tmp_path: Path, signum: signal.Signals) -> None:
    # SIGTERM and SIGINT take the path SIGHUP takes: one kernel is enough there.
    check_signal(tmp_path, "local", 1 if signum in (signal.SIGTERM, signal.SIGINT) else 2, signum)


@needs_sandbox
@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGKILL], ids=lambda s: s.name)
def test_sandboxed_app_leaves_no_process(tmp_path: Path, signum: signal.Signals) -> None:
    check_signal(tmp_path, "sandbox", 2, signum)


class DockerTerminalApp(TerminalApp):
    """The app in docker mode: its kernels run in containers, outside its process tree."""

    def containers(self) -> list[str]:
        """Names of the running kernel containers this app started (by their owner label)."""
        done = subprocess.run(
            ["docker", "ps", "--filter", "label=freeact-tui=kernel",
             "--format", '{{.Names}} {{.Label "freeact-tui.owner"}}'],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        lines = (line.partition(" ") for line in done.stdout.splitlines())
        return [name for name, _, owner in lines if owner.startswith(f"{self.process.pid}:")]

    def kernels(self, below: dict[int, float]) -> int:
        return len(self.containers())


@pytest.fixture(scope="module")
def docker_image() -> str:
    if DAEMON_PROBLEM is not None and not os.environ.get("CI"):
        pytest.skip(f"Docker unavailable: {DAEMON_PROBLEM}")
    asyncio.run(build_image(IMAGE))
    return IMAGE


def _remove_containers(names: list[str]) -> None:
    if names:
        subprocess.run(["docker", "rm", "--force", *names], capture_output=True, timeout=60)


def test_docker_kernels_end_after_sigkill(tmp_path: Path, docker_image: str) -> None:
    app = DockerTerminalApp(tmp_path, "docker", f'docker_image = "{docker_image}"\n')
    recorded: dict[int, float] = {}
    containers: list[str] = []
    try:
        recorded = app.wait_for_kernels(2)
        containers = app.containers()
        os.kill(app.process.pid, signal.SIGKILL)
        started = time.monotonic()
        while app.containers() and time.monotonic() - started < ORPHAN_LIMIT:
            time.sleep(0.2)
        assert not app.containers(), f"containers still running after {ORPHAN_LIMIT:g}s"
        left, took = wait_gone(recorded, ORPHAN_LIMIT)
        assert not left, f"left {len(left)} of {len(recorded)} after {took:.1f}s: {_describe(left)}"
    finally:
        app.stop()
        _kill(alive(recorded))
        _remove_containers(containers)


def test_next_start_removes_the_containers_of_dead_owners(docker_image: str) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    owners = {"dead": f"{gone.pid}:1", "alive": owner_label(), "unlabelled": ""}
    names = {what: f"freeact-tui-reap-{what}-{os.getpid()}" for what in owners}
    for what, owner in owners.items():
        labels = ["--label", "freeact-tui=kernel"] + (
            ["--label", f"freeact-tui.owner={owner}"] if owner else []
        )
        subprocess.run(
            ["docker", "run", "--detach", "--rm", "--name", names[what], *labels, docker_image, "sleep", "120"],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
    try:
        removed = asyncio.run(reap_orphaned_containers(shutil.which("docker") or "docker"))
        assert names["dead"] in removed
        assert names["alive"] not in removed and names["unlabelled"] not in removed
        done = subprocess.run(
            ["docker", "ps", "--all", "--format", "{{.Names}}"], capture_output=True, text=True, timeout=30
        )
        running = set(done.stdout.split())
        assert names["dead"] not in running
        assert {names["alive"], names["unlabelled"]} <= running
    finally:
        _remove_containers(list(names.values()))


def test_owner_lock_is_free_once_its_holder_dies(tmp_path: Path) -> None:
    path = tmp_path / "owner.lock"
    lock = OwnerLock(path)
    assert not owner_gone(path)
    lock.release()
    assert owner_gone(path)
    code = "import pathlib, sys, time\nfrom freeact_tui.execution.orphans import OwnerLock\n"
    code += "lock = OwnerLock(pathlib.Path(sys.argv[1]))\nprint('held', flush=True)\ntime.sleep(60)"
    holder = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert not owner_gone(path)
    finally:
        holder.kill()
        holder.wait()
    assert owner_gone(path)  # released by the kernel, though the holder never let go


def test_a_wrapped_command_ends_when_its_parent_is_killed() -> None:
    code = "import subprocess, sys, time\nfrom freeact_tui.execution.orphans import die_with_parent\n"
    code += "command, args = die_with_parent('sleep', ['60'])\n"
    code += "print(subprocess.Popen([command, *args]).pid, flush=True)\ntime.sleep(60)"
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        deadline = time.monotonic() + 10
        while _cmdline(child) != "sleep 60" and time.monotonic() < deadline:
            time.sleep(0.05)  # the wrapper becomes `sleep` once it has set the signal
        recorded = {child: psutil.Process(child).create_time()}
    finally:
        parent.kill()
        parent.wait()
    left, _ = wait_gone(recorded, ORPHAN_LIMIT)
    _kill(left)
    assert not left
    assert die_with_parent("/nonexistent/server", ["x"]) == ("/nonexistent/server", ["x"])
