"""An agent's one event channel: every event an agent (or a part of it) reports goes through ``put``.

While a turn runs (``Agent.stream()`` is being iterated), every event goes into that turn's queue,
in the order it was put, and ``stream()`` yields it; listeners get nothing then, so no event is
seen twice. Between turns (idle), events go to the listeners registered with ``subscribe()`` —
kernel status, usage totals, subagent status, checkpoint notices, context gauge after
``/compact`` — and with no listener they are dropped (no one waits for them; the next turn's
events carry the current state again). ``close()`` ends the running turn's stream after the
events already in it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from freeact_tui.events import AgentEvent

_END = object()


class EventChannel:
    """The events of one agent: into the running turn's stream, else to the listeners."""

    def __init__(self) -> None:
        self._listeners: list[Callable[[AgentEvent], None]] = []
        self._queue: asyncio.Queue[object] | None = None

    @property
    def in_turn(self) -> bool:
        return self._queue is not None

    def subscribe(self, callback: Callable[[AgentEvent], None]) -> None:
        """Receive the events put while no turn streams them (a callback subscribed again gets each once)."""
        if callback not in self._listeners:  # the UI redraws an agent's view (a rewind) and subscribes again
            self._listeners.append(callback)

    def put(self, event: AgentEvent) -> None:
        """Into the running turn's stream, or else to the listeners: once, never both."""
        if self._queue is not None:
            self._queue.put_nowait(event)
            return
        for listener in list(self._listeners):
            listener(event)

    def open(self) -> None:
        """A turn starts: events go into its stream from now on."""
        self._queue = asyncio.Queue()

    def close(self) -> None:
        """The turn ends: its stream ends after the events already in it."""
        if self._queue is not None:
            self._queue.put_nowait(_END)

    async def drain(self) -> AsyncIterator[AgentEvent]:
        """The running turn's events until ``close()`` (``release()`` makes the channel idle again)."""
        queue = self._queue
        assert queue is not None, "open() first"
        while True:
            item = await queue.get()
            if item is _END:
                return
            assert isinstance(item, AgentEvent)
            yield item

    def release(self) -> None:
        """The turn has unwound: events go to the listeners again."""
        self._queue = None


__all__ = ["EventChannel"]
