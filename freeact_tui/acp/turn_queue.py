"""Prompts of one session in order: a prompt sent while another runs waits its turn (first come, first
served) instead of being refused; a ``session/cancel`` cancels the running turn and every prompt that was
already waiting when it came (they answer ``cancelled`` without running)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class TurnQueue:
    """Tickets in arrival order; ``cancel()`` voids every ticket handed out so far."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()  # FIFO: waiters acquire in the order they asked
        self._issued = 0
        self._cancelled_upto = 0

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[bool]:
        """Wait for this prompt's turn; yields whether it still should run (not cancelled meanwhile)."""
        self._issued += 1
        ticket = self._issued
        async with self._lock:
            yield ticket > self._cancelled_upto

    def cancel(self) -> None:
        """Void the running prompt's ticket and every waiting one."""
        self._cancelled_upto = self._issued

    @property
    def busy(self) -> bool:
        return self._lock.locked()


__all__ = ["TurnQueue"]
