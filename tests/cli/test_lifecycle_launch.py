"""The real CLI killed at each moment of the kernel's early start leaves no process behind: the kernel
launched right after the trust decision while the agent's modules still import (before the agent
opens), the gateway creating the kernel, the kernel ready with the tool server maybe still coming up.

Each run kills the app the moment its start-up timeline (``FREEACT_TUI_TIMELINE``) reaches the stage,
then waits until no process with the app's HOME is left (``test_lifecycle_startup`` kills by delay).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tests.helpers import (
    CALC_SERVER,
    ORPHAN_LIMIT,
    TimelineApp,
    describe_processes,
    kill_processes,
    left_after,
    with_home,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]

ARGV = ["--trust", "--model", "test", "--execution", "local"]


@pytest.mark.parametrize("stage", ["kernel_launch:end", "kernel_create:start", "kernel:ready"])
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=lambda s: s.name)
def test_killed_while_the_kernel_starts_before_the_agent_the_app_leaves_no_process(
    tmp_path: Path, stage: str, signum: signal.Signals
) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / ".freeact-tui.toml").write_text(CALC_SERVER)
    with TimelineApp(tmp_path, ARGV) as app:
        try:
            app.wait_for(stage, time.monotonic() + 120, step=0.005)
            stages = app.stages()
            os.kill(app.process.pid, signum)
            app.process.wait(60)
            if stage == "kernel_launch:end":  # the case this ordering adds: the agent is not open yet
                assert "agent_open:start" not in stages, "the agent opened before the kill: no case"
            # (killed at kernel_launch:end, the next mark may not be written: its import had not begun)
            assert "kernel_launch:start" in stages
            assert stages["kernel_launch:start"] < stages.get("agent_import:start", float("inf"))
            left = left_after(tmp_path, ORPHAN_LIMIT)
            assert not left, f"left after {stage}: {describe_processes(left)}"
        finally:
            kill_processes(with_home(tmp_path))


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=lambda s: s.name)
def test_killed_while_the_config_is_validated_after_the_first_frame_the_app_leaves_no_process(
    tmp_path: Path, signum: signal.Signals
) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / ".freeact-tui.toml").write_text(CALC_SERVER)
    try:
        with TimelineApp(tmp_path, ARGV) as first:  # validated before its first frame: now known valid
            first.wait_for("app_import:start", time.monotonic() + 120)
            assert first.stages()["config_validate:start"] < first.stages()["app_import:start"]
        kill_processes(with_home(tmp_path))
        (tmp_path / "timeline.txt").unlink()
        with TimelineApp(tmp_path, ARGV) as app:
            app.wait_for("config_validate:start", time.monotonic() + 120, step=0.002)
            os.kill(app.process.pid, signum)
            app.process.wait(60)
            stages = app.stages()
            assert stages["config_validate:start"] > stages["app:mount:end"], "not deferred: no case"
            left = left_after(tmp_path, ORPHAN_LIMIT)
            assert not left, f"left: {describe_processes(left)}"
    finally:
        kill_processes(with_home(tmp_path))
