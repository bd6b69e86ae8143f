"""The real CLI killed at any moment of its start-up leaves no process behind: the spare gateway spawned
first thing, the gateway it becomes, the kernel, the MCP server.

Each test starts ``freeact-tui`` in a pseudo-terminal with its own HOME (every process the app starts
keeps HOME, the spare gateway and the kernels included), kills it after a delay, and waits until no
process with that HOME is left. Processes that started between two looks are found all the same.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.helpers import CALC_SERVER, TerminalApp, describe_processes, with_home

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]


# Moments of start-up: the spare importing, the app importing, the agent opening, the kernel starting.
@pytest.mark.parametrize("delay", [0.3, 1.5, 3.0, 6.0])
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=lambda s: s.name)
def test_killed_during_start_up_the_app_leaves_no_process(
    tmp_path: Path, delay: float, signum: signal.Signals
) -> None:
    with TerminalApp(tmp_path, "local", CALC_SERVER) as app:
        time.sleep(delay)
        seen = with_home(app.home)
        assert app.process.pid in seen
        left = app.killed_leaves(signum, wait=60)
        assert not left, f"left after {delay:g} s: {describe_processes(left)} (running before: {len(seen)})"


def test_killed_once_the_kernel_runs_the_app_leaves_no_process(tmp_path: Path) -> None:
    with TerminalApp(tmp_path, "local", "subagent_pool_size = 0\n" + CALC_SERVER) as app:
        app.wait_for_kernels(1, also="calc.py")
        left = app.killed_leaves()
        assert not left, describe_processes(left)
