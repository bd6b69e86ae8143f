"""What every execution backend's tests share: running a cell, and the interrupt/timeout check."""

from __future__ import annotations

import asyncio
import time

from freeact_tui.execution.base import ExecApproval, ExecChunk, ExecResult, Executor


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
