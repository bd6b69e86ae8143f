"""The real CLI in a terminal: however it ends (SIGHUP, SIGTERM, SIGINT, SIGKILL), no process is left.

Each test starts ``freeact-tui --model test`` in a pseudo-terminal with its own home, waits until
its kernels run, records every descendant (pid and start time), signals the app and counts the
recorded processes still alive.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from freeact_tui.execution.isolation.docker import reap_orphaned_containers
from freeact_tui.execution.isolation.docker_image import build_image
from freeact_tui.execution.orphans import OwnerLock, die_with_parent, owner_gone, owner_label
from tests.helpers import (
    CALC_SERVER,
    IMAGE,
    ORPHAN_LIMIT,
    TerminalApp,
    alive,
    command_line,
    describe_processes,
    docker_problem,
    kill_processes,
    wait_gone,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]

QUIT_LIMIT = 40.0  # seconds a clean quit may take under load

needs_sandbox = pytest.mark.skipif(
    (shutil.which("bwrap") is None or shutil.which("socat") is None) and not os.environ.get("CI"),
    reason="bwrap or socat not installed (Debian packages: bubblewrap, socat)",
)


# An MCP server for JSON tool calls: the app starts it at launch.
def check_signal(tmp_path: Path, execution: str, kernels: int, signum: signal.Signals) -> None:
    # Without a warm pool the app runs one kernel (the main agent's), with one two.
    config = "subagent_pool_size = 0\n" if kernels == 1 else ""
    app = TerminalApp(tmp_path, execution, config + CALC_SERVER)
    before = sorted(p.name for p in (tmp_path / "work").iterdir())
    recorded: dict[int, float] = {}
    try:
        recorded = app.wait_for_kernels(kernels, also="calc.py")
        os.kill(app.process.pid, signum)
        if signum == signal.SIGHUP:
            app.close_terminal()  # the terminal is gone, as when its window closes
        if signum != signal.SIGKILL:
            # A clean quit: the app ends by itself (status 0, not killed by the signal), and an isolated
            # kernel's mount points in the folder (an empty `.git/`, `.env/`, …) went with it.
            assert app.process.wait(QUIT_LIMIT) == 0
            assert sorted(p.name for p in (tmp_path / "work").iterdir()) == before
        left, took = wait_gone(recorded, ORPHAN_LIMIT)
        assert not left, f"left {len(left)} of {len(recorded)} after {took:.1f}s: {describe_processes(left)}"
    finally:
        app.stop()
        kill_processes(alive(recorded))


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
    if docker_problem() is not None and not os.environ.get("CI"):
        pytest.skip(f"Docker unavailable: {docker_problem()}")
    asyncio.run(build_image(IMAGE))
    return IMAGE


def _remove_containers(names: list[str]) -> None:
    if names:
        subprocess.run(["docker", "rm", "--force", *names], capture_output=True, timeout=60)


def test_docker_kernels_end_after_sigkill(tmp_path: Path, docker_image: str) -> None:
    # the user's config: a project may not choose what runs as the kernel (project_policy)
    app = DockerTerminalApp(tmp_path, "docker", user_config=f'docker_image = "{docker_image}"\n')
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
        assert not left, f"left {len(left)} of {len(recorded)} after {took:.1f}s: {describe_processes(left)}"
    finally:
        app.stop()
        kill_processes(alive(recorded))
        _remove_containers(containers)


def test_docker_quit_leaves_the_folder_as_it_was(tmp_path: Path, docker_image: str) -> None:
    """Two kernel containers of one folder (the main agent's and a warm subagent's): each binds every
    name once (Docker refuses a duplicate mount point), and the quit removes the containers and the
    empty mount points they made in the folder."""
    app = DockerTerminalApp(tmp_path, "docker", user_config=f'docker_image = "{docker_image}"\n')
    before = sorted(p.name for p in (tmp_path / "work").iterdir())
    containers: list[str] = []
    try:
        app.wait_for_kernels(2)
        containers = app.containers()
        os.kill(app.process.pid, signal.SIGTERM)
        assert app.process.wait(QUIT_LIMIT) == 0
        assert not app.containers()
        assert sorted(p.name for p in (tmp_path / "work").iterdir()) == before
    finally:
        app.stop()
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
        while command_line(child) != "sleep 60" and time.monotonic() < deadline:
            time.sleep(0.05)  # the wrapper becomes `sleep` once it has set the signal
        recorded = {child: psutil.Process(child).create_time()}
    finally:
        parent.kill()
        parent.wait()
    left, _ = wait_gone(recorded, ORPHAN_LIMIT)
    kill_processes(left)
    assert not left
    assert die_with_parent("/nonexistent/server", ["x"]) == ("/nonexistent/server", ["x"])
