"""Esc on a command whose kernel does not respond to the interrupt ends the turn at once; the kernel is replaced in the
background, the status bar says "kernel: restarting", and the next command waits for the new kernel
(issue #32). The real app under Pilot with a real kernel."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

import psutil
import pytest
import pytest_asyncio
from textual.widgets import Label

from freeact_tui.execution.base import ExecResult
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.project.config import Config
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.widgets.blocks import ExecutionOutputBlock, NoticeBlock
from freeact_tui.tui.widgets.blocks.output import AnsiLog
from tests.helpers import main, send, until
from tests.scripted import script

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(180), pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def executor(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[KernelExecutor]:
    work = tmp_path_factory.mktemp("deaf")
    ex = KernelExecutor(working_dir=work, images_dir=work / "images")
    await ex.start()
    yield ex
    await ex.stop()


def outputs(app: FreeactApp) -> list[str]:
    return [b.text for b in main(app).conversation.query(ExecutionOutputBlock) if b.query(AnsiLog)]


async def run(executor: KernelExecutor, code: str) -> ExecResult:
    async for item in executor.stream(code):
        if isinstance(item, ExecResult):
            return item
    raise AssertionError("no result")


def notices(app: FreeactApp) -> list[str]:
    return [b.text for b in main(app).conversation.query(NoticeBlock)]


async def test_the_turn_ends_at_once_and_the_kernel_restarts_behind_it(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    config = Config(
        sessions_dir=tmp_path / "sessions", working_dir=tmp_path, subagent_pool_size=0, skip_permissions=True
    )  # type: ignore[call-arg]
    app = FreeactApp(config, model=script(["ok"]).model(), executor=executor)
    async with app.run_test(size=(120, 40)) as pilot:
        assert (await run(executor, "x = 42")).text == ""  # state the restart loses
        # The kernel itself stops responding (as one stuck in C code would): only a new kernel helps.
        await send(pilot, "!echo deaf; sleep 0.5; kill -STOP $PPID; sleep 30")
        await until(pilot, lambda: any("deaf" in o for o in outputs(app)), limit=30)
        old = executor.kernel_pid
        assert old is not None
        await until(pilot, lambda: psutil.Process(old).status() == psutil.STATUS_STOPPED, limit=10)
        # bash and its `sleep 30`: bash starts it just after the kill, seconds later on a loaded machine
        await until(
            pilot, lambda: any("sleep" in p.name() for p in psutil.Process(old).children(recursive=True)), limit=20
        )
        below = psutil.Process(old).children(recursive=True)
        started = time.monotonic()
        await pilot.press("escape")
        # What the user sees the moment the turn is over: the old kernel is still being replaced.
        seen: list[tuple[str, str]] = []
        await until(
            pilot,
            lambda: (
                not main(app).turn_running
                and not seen.append(
                    (executor.state, str(main(app).status_bar.query_one("#status-kernel", Label).content))
                )
            ),
            limit=15,
            step=0.01,
        )
        took = time.monotonic() - started
        assert took < 4.0, took  # not the gateway's 5 s grace (load-tolerant; speed is bench's)
        assert seen[-1] == ("restarting", "kernel: restarting")
        # The deaf kernel and what it started are killed at once (not after the gateway's 5 s grace).
        gone = [*below]
        with contextlib.suppress(psutil.NoSuchProcess):  # already gone: what is asserted below
            gone.append(psutil.Process(old))
        await until(pilot, lambda: all(_ended(p) for p in gone), 4.0)
        await until(pilot, lambda: any("being restarted" in n for n in notices(app)), limit=5)
        # The next command waits for the new kernel, then runs in it: the old state is gone.
        await send(pilot, "!echo after-$((40 + 2))")
        await until(pilot, lambda: any("after-42" in o for o in outputs(app)), limit=60)
        await until(pilot, lambda: not main(app).turn_running and executor.state == "ready", limit=10)
        assert executor.kernel_pid not in (None, old)
        assert (await run(executor, "print('x' in dir())")).text.strip() == "False"


def _ended(process: psutil.Process) -> bool:
    """Gone or a zombie (a process that ends between two questions is gone too)."""
    try:
        return not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True
