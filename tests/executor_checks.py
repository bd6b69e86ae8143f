"""What every execution backend's tests share: running a cell, waiting for processes, the interrupt/timeout check."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import psutil
import pytest

from freeact_tui.execution.base import ExecApproval, ExecChunk, ExecResult, Executor
from freeact_tui.execution.isolation.bridge import PortBridges

T = TypeVar("T")


async def run(
    executor: Executor,
    code: str,
    *,
    limit: float | None = None,
    decide: bool = True,
    delay: float = 0,
) -> tuple[list[ExecApproval | ExecChunk], ExecResult]:
    """Run a cell, answering every approval with ``decide`` after ``delay`` seconds."""
    items: list[ExecApproval | ExecChunk] = []
    async for item in executor.stream(code, timeout=limit):
        if isinstance(item, ExecResult):
            return items, item
        items.append(item)
        if isinstance(item, ExecApproval):
            await asyncio.sleep(delay)
            await (item.accept() if decide else item.reject())
    raise AssertionError("stream ended without an ExecResult")


async def until(check: Callable[[], T], what: str, within: float = 15) -> T:
    """Poll ``check`` until it returns a true value (returned); fail naming ``what`` after ``within`` s.

    Processes start and are reaped asynchronously: on a loaded machine a fixed sleep before
    looking at them is a race, a bounded wait is not.
    """
    deadline = time.monotonic() + within
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {within:g}s: {what} (last: {value!r})")
        await asyncio.sleep(0.05)


def new_descendants(before: set[int]) -> dict[int, str]:
    """This process's descendants that are not in ``before`` (pid -> name; zombies count)."""
    found: dict[int, str] = {}
    for proc in psutil.Process(os.getpid()).children(recursive=True):
        if proc.pid not in before:
            with contextlib.suppress(psutil.Error):
                found[proc.pid] = proc.name()
    return found


def descendants() -> set[int]:
    """Process ids of this process's descendants now."""
    return {p.pid for p in psutil.Process(os.getpid()).children(recursive=True)}


async def no_new_descendants(before: set[int], within: float = 5) -> None:
    """Every process started since ``before`` has ended and been reaped, within ``within`` seconds."""
    deadline = time.monotonic() + within
    while left := new_descendants(before):
        if time.monotonic() > deadline:
            raise AssertionError(f"processes left behind after {within:g}s: {left}")
        await asyncio.sleep(0.05)


def record_socket_dirs(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The socket directories of the port bridges opened from now on, in order.

    Only these may be checked: other test processes (parallel runs) make their own in ``/tmp``.
    """
    created: list[Path] = []
    init = PortBridges.__init__

    def recording(self: PortBridges, prefix: str) -> None:
        init(self, prefix)
        created.append(self.socket_dir)

    monkeypatch.setattr(PortBridges, "__init__", recording)
    return created


def approvals(items: list[ExecApproval | ExecChunk]) -> list[ExecApproval]:
    return [i for i in items if isinstance(i, ExecApproval)]


async def check_interrupt_and_timeout(ex: Executor) -> None:
    """An interrupted cell ends with its partial output, a timed-out one within 3 s, and the state survives."""
    await run(ex, "kept = 'yes'")
    got: list[object] = []
    first = asyncio.Event()

    async def consume() -> None:
        async for item in ex.stream("import time\nprint('partial', flush=True)\ntime.sleep(30)"):
            got.append(item)
            first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 10)
    await ex.interrupt()
    await asyncio.wait_for(task, 5)
    result = got[-1]
    assert isinstance(result, ExecResult) and result.cancelled and result.text.startswith("partial")
    started = time.monotonic()
    _, result = await run(ex, "import time\ntime.sleep(5)", limit=1)
    assert result.timed_out and time.monotonic() - started < 3
    _, after = await run(ex, "print(kept)")
    assert after.text == "yes"
