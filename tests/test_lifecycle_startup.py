"""The real CLI killed at any moment of its start-up leaves no process behind: the spare gateway spawned
first thing, the gateway it becomes, the kernel, the MCP server.

Each test starts ``freeact-tui`` in a pseudo-terminal with its own HOME (every process the app starts
keeps HOME, the spare gateway and the kernels included), kills it after a delay, and waits until no
process with that HOME is left. Processes that started between two looks are found all the same.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tests.helpers import CALC_SERVER, ORPHAN_LIMIT, TerminalApp, describe_processes, kill_processes

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]


def _with_home(home: Path) -> list[int]:
    """Every process whose environment has ``HOME=home``."""
    wanted = b"HOME=" + str(home).encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            environ = Path(f"/proc/{name}/environ").read_bytes().split(b"\0")
            state = Path(f"/proc/{name}/stat").read_bytes().rpartition(b")")[2].split()[0]
        except OSError:
            continue
        if wanted in environ and state != b"Z":
            found.append(int(name))
    return found


def _left_after(home: Path, limit: float) -> list[int]:
    deadline = time.monotonic() + limit
    left = _with_home(home)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = _with_home(home)
    return left


# Moments of start-up: the spare importing, the app importing, the agent opening, the kernel starting.
@pytest.mark.parametrize("delay", [0.3, 1.5, 3.0, 6.0])
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=lambda s: s.name)
def test_killed_during_start_up_the_app_leaves_no_process(
    tmp_path: Path, delay: float, signum: signal.Signals
) -> None:
    app = TerminalApp(tmp_path, "local", CALC_SERVER)
    home = tmp_path / "home"
    try:
        time.sleep(delay)
        seen = _with_home(home)
        assert app.process.pid in seen
        os.kill(app.process.pid, signum)
        app.process.wait(60)
        left = _left_after(home, ORPHAN_LIMIT)
        assert not left, f"left after {delay:g} s: {describe_processes(left)} (running before: {len(seen)})"
    finally:
        app.stop()
        kill_processes(_with_home(home))


def test_killed_once_the_kernel_runs_the_app_leaves_no_process(tmp_path: Path) -> None:
    app = TerminalApp(tmp_path, "local", "subagent_pool_size = 0\n" + CALC_SERVER)
    home = tmp_path / "home"
    try:
        app.wait_for_kernels(1, also="calc.py")
        os.kill(app.process.pid, signal.SIGKILL)
        app.process.wait(10)
        left = _left_after(home, ORPHAN_LIMIT)
        assert not left, describe_processes(left)
    finally:
        app.stop()
        kill_processes(_with_home(home))
