"""A kernel that exits as it starts is started again, at once, not waited for until ``kernel_init_timeout``.

It happens through no fault of the kernel: the gateway chooses a kernel's ports by binding and closing
them, and another process can take one before the kernel binds it ("Address already in use"; seen in
CI with two test workers starting kernels). The gateway runs with autorestart off and holds the
websocket's handshake until the kernel answers, so before this the init code waited 30 s and failed.

The kernel spec's launcher is replaced (in a home of the test's own, where the kernel environment and
its spec are written) by one that exits like that the first time, or every time.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from freeact_tui.execution import create_executor
from freeact_tui.execution.base import ExecutorError
from freeact_tui.execution.kernel import venv as kernel_venv
from tests.executor_checks import run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(180)]

# The launcher of the kernel spec, preceded by an exit as a lost port race ends a kernel's start.
EXITS = (
    "import os, sys\n"
    "if {condition}:\n"
    "    open({marker!r}, 'a').write('x')\n"
    "    sys.stderr.write('zmq.error.ZMQError: Address already in use (as a lost port race)\\n')\n"
    "    sys.exit(1)\n"
)


def _launcher(marker: Path, *, every_time: bool) -> str:
    condition = "True" if every_time else f"not os.path.exists({str(marker)!r})"
    return EXITS.format(condition=condition, marker=str(marker)) + kernel_venv._LAUNCH_KERNEL.replace(
        "; ", "\n"
    )


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FREEACT_TUI_HOME", str(tmp_path / "home"))
    (tmp_path / "work").mkdir()
    return tmp_path


async def test_a_kernel_that_exits_as_it_starts_is_started_again(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = home / "exited"
    monkeypatch.setattr(kernel_venv, "_LAUNCH_KERNEL", _launcher(marker, every_time=False))
    executor = create_executor("local", working_dir=home / "work", images_dir=home / "images")
    began = time.monotonic()
    try:
        await executor.start()
        took = time.monotonic() - began
        assert marker.read_text() == "x"  # the first kernel exited
        assert took < 20, f"{took:.1f} s: waited for the init timeout (30 s) instead of starting another"
        _, result = await run(executor, "print(6 * 7)", limit=60)
        assert result.text.strip() == "42" and not result.is_error
    finally:
        await executor.stop()


async def test_a_kernel_that_always_exits_as_it_starts_is_a_clear_error_soon(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = home / "exited"
    monkeypatch.setattr(kernel_venv, "_LAUNCH_KERNEL", _launcher(marker, every_time=True))
    executor = create_executor("local", working_dir=home / "work", images_dir=home / "images")
    began = time.monotonic()
    try:
        with pytest.raises(ExecutorError) as failed:
            await executor.start()
    finally:
        await executor.stop()
    assert time.monotonic() - began < 25
    # With the gateway's log (the kernels' own lines may have scrolled out of its tail by then).
    assert "exited during startup, 3 times" in str(failed.value) and "Gateway log:" in str(failed.value)
    assert marker.read_text() == "xxx"
