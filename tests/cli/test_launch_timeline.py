"""The start-up timeline (``FREEACT_TUI_TIMELINE``): off by default, and a real kernel start marks its stages in order."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from freeact_tui import timeline

ROOT = Path(__file__).resolve().parents[2]


def _read(path: Path) -> dict[str, float]:
    stages: dict[str, float] = {}
    for line in path.read_text().splitlines():
        stage, _, at = line.rpartition(" ")
        stages.setdefault(stage, float(at))
    return stages


def _mark_in_subprocess(env: dict[str, str]) -> None:
    code = "from freeact_tui.timeline import mark; mark('a'); mark('b', 1.5)"
    subprocess.run([sys.executable, "-c", code], env={**env, "PYTHONPATH": str(ROOT)}, check=True)


def test_marks_are_appended_only_when_the_variable_is_set(tmp_path: Path) -> None:
    path = tmp_path / "timeline.txt"
    env = {k: v for k, v in os.environ.items() if k != timeline.ENV}
    _mark_in_subprocess(env)
    assert not path.exists()
    _mark_in_subprocess({**env, timeline.ENV: str(path)})
    _mark_in_subprocess({**env, timeline.ENV: str(path)})
    lines = path.read_text().splitlines()
    assert [line.split()[0] for line in lines] == ["a", "b", "a", "b"]
    assert lines[1] == "b 1.500000"


def test_an_unwritable_timeline_does_not_stop_the_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timeline, "_PATH", str(tmp_path / "missing-dir" / "timeline.txt"))
    timeline.mark("a")  # no exception: a measurement aid never breaks the app


async def test_a_kernel_start_marks_each_stage_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from freeact_tui.execution.kernel.executor import KernelExecutor

    path = tmp_path / "timeline.txt"
    monkeypatch.setattr(timeline, "_PATH", str(path))
    work = tmp_path / "work"
    work.mkdir()
    ex = KernelExecutor(working_dir=work, images_dir=work / "images")
    try:
        await ex.start()
        pid = ex.kernel_pid
    finally:
        await ex.stop()
    stages = _read(path)
    # The tool server imports while the kernel is created (the two overlap); ready once the kernel runs
    # code, whether or not the tool server is up yet (a cell's request waits for it in its backlog).
    order = [
        "tool_server:start",
        "gateway_spawn:start",
        "gateway_spawn:end",
        "kernel_create:start",
        "gateway:listening",
        "kernel_create:end",
        "kernel_init_code:start",
        "kernel_init_code:end",
        "kernel:ready",
    ]
    assert set(order) <= set(stages), stages
    assert sorted(order, key=stages.__getitem__) == order, stages
    assert stages["tool_server:start"] < stages["kernel:ready"], stages
    # The kernel's process start (clock ticks, 10 ms) falls within the request that started it.
    tick = 0.011
    assert (
        stages["kernel_create:start"] - tick <= stages["kernel:process"] <= stages["kernel_create:end"] + tick
    )
    assert pid is not None
