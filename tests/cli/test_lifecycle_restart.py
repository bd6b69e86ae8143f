"""The real CLI killed while it replaces a kernel that ignored Esc (the restart runs after the turn has
ended, issue #32) leaves no process behind: not the deaf kernel, not what it ran, not the new kernel.

As in ``test_lifecycle_startup``: ``freeact-tui`` in a pseudo-terminal with its own HOME, and every
process with that HOME found through /proc.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import psutil
import pytest

from tests.helpers import TerminalApp, command_line, describe_processes

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]


def _stopped_kernel(app: TerminalApp) -> int | None:
    for pid in app.descendants():
        try:
            if "ipykernel" in command_line(pid) and psutil.Process(pid).status() == psutil.STATUS_STOPPED:
                return pid
        except psutil.Error:
            continue
    return None


@pytest.mark.parametrize("after", [0.0, 0.6])
def test_killed_while_the_kernel_restarts_after_esc_the_app_leaves_no_process(
    tmp_path: Path, after: float
) -> None:
    with TerminalApp(tmp_path, "local", "subagent_pool_size = 0\n") as app:
        app.wait_for_kernels(1)
        # The kernel stops responding (as one stuck in C code would): Esc cannot stop the command.
        os.write(app.master, b"!echo deaf; sleep 0.5; kill -STOP $PPID; sleep 30\r")
        deadline = time.monotonic() + 60
        deaf = _stopped_kernel(app)
        while deaf is None:
            assert time.monotonic() < deadline, describe_processes(app.descendants())
            time.sleep(0.1)
            deaf = _stopped_kernel(app)
        os.write(app.master, b"\x1b")
        time.sleep(1.0 + after)  # the cell's grace (1 s), then the restart runs in the background
        left = app.killed_leaves()
        assert not left, describe_processes(left)
