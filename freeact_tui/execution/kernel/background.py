"""The background tasks of an executor (warm-ups, restarts, abandoned cells), cancelled when it stops."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable


class BackgroundTasks:
    """Tasks kept referenced until they end (the event loop keeps only weak references to them)."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def spawn(self, coro: Awaitable[None]) -> None:
        """Run ``coro`` in the background."""
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def cancel(self) -> None:
        """Cancel the tasks still running and wait until they have ended."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
