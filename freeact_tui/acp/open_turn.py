"""The prompt running in a session, as its end sees it (``session_end``)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from acp.schema import StopReason

if TYPE_CHECKING:
    from freeact_tui.acp.turn_updates import TurnUpdates

logger = logging.getLogger(__name__)


@dataclass
class OpenTurn:
    """The prompt running in a session: the task that runs its turn, what it has shown of its tool calls
    (``TurnUpdates``, set by the turn runner), and whether it was abandoned (its prompt answered)."""

    task: asyncio.Task[StopReason]
    updates: TurnUpdates | None = None
    abandoned: asyncio.Event = field(default_factory=asyncio.Event)

    def retrieved(self, task: asyncio.Task[Any]) -> None:
        """The turn's task ended: an error of a turn abandoned (nobody reads its result) is one log line."""
        error = None if task.cancelled() else task.exception()
        if error is not None and self.abandoned.is_set():
            logger.warning("an abandoned turn ended with an error: %s", error)


__all__ = ["OpenTurn"]
