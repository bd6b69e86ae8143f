"""A small pool of warm executors, so a subagent's first action need not wait for a cold kernel."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from freeact_tui.execution.base import Executor

logger = logging.getLogger(__name__)


class ExecutorPool:
    """Keeps up to ``size`` started executors ready; ``acquire()`` hands one out and refills.

    With ``size == 0`` every ``acquire()`` starts a cold executor. Executors handed out belong to the
    caller, who stops them when done (a subagent's kernel state is never reused).
    """

    def __init__(self, factory: Callable[[], Executor], size: int) -> None:
        self._factory = factory
        self.size = size
        self._ready: list[Executor] = []
        self._filling: set[asyncio.Task[None]] = set()
        self._closed = False

    @property
    def ready_count(self) -> int:
        return len(self._ready)

    def fill(self) -> None:
        """Start warming executors in the background until ``size`` are ready or warming."""
        while not self._closed and len(self._ready) + len(self._filling) < self.size:
            task = asyncio.create_task(self._warm_one())
            self._filling.add(task)
            task.add_done_callback(self._filling.discard)

    async def _warm_one(self) -> None:
        executor = self._factory()
        try:
            await executor.start()
            async for _ in executor.stream("pass"):  # waits out the background warm-up too
                pass
        except Exception as exc:  # a broken pool must not break subagents: they start cold
            logger.warning("warm kernel failed to start: %s", exc)
            with contextlib.suppress(Exception):
                await executor.stop()
            return
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await asyncio.shield(executor.stop())
            raise
        if self._closed:
            await executor.stop()
        else:
            self._ready.append(executor)

    async def acquire(self) -> Executor:
        """A started executor: a warm one if ready, else a cold start."""
        if self._ready:
            executor = self._ready.pop(0)
            self.fill()
            return executor
        self.fill()
        executor = self._factory()
        try:
            await executor.start()
        except BaseException:
            with contextlib.suppress(Exception):
                await asyncio.shield(executor.stop())
            raise
        return executor

    async def stop(self) -> None:
        self._closed = True
        for task in list(self._filling):
            task.cancel()
        await asyncio.gather(*self._filling, return_exceptions=True)
        ready, self._ready = self._ready, []
        await asyncio.gather(*(e.stop() for e in ready), return_exceptions=True)
