"""An executor's kernel state as its listeners see it: the state, its detail, and who is told."""

from __future__ import annotations

import logging

from freeact_tui.events import KernelState
from freeact_tui.execution.base import StateListener

logger = logging.getLogger(__name__)


class StateRelay:
    """The current ``state`` and ``detail``; ``set`` tells every listener of a change."""

    def __init__(self) -> None:
        self.state: KernelState = "stopped"
        self.detail = ""
        self._listeners: list[StateListener] = []

    def add_listener(self, listener: StateListener) -> None:
        """``listener(state, detail)`` is called on every state change."""
        self._listeners.append(listener)

    def set(self, state: KernelState, detail: str = "") -> None:
        """Change the state (nothing happens if neither it nor its detail changes)."""
        if (state, detail) == (self.state, self.detail):
            return
        self.state, self.detail = state, detail
        for listener in list(self._listeners):
            try:
                listener(state, detail)
            except Exception:
                logger.exception("kernel state listener failed")
