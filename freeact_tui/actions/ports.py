"""What the parts of a running turn reach through: one bundle handed once, not field by field.

``EventPorts`` is what reports (the approval gate needs no more); ``TurnPorts`` adds what acts:
approval, the kernel and the store for big results. The agent builds one per agent and passes
it to the dispatcher, which hands it on to the file tools and the code action runner.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from freeact_tui.events import AgentEvent, Decision, Phase
from freeact_tui.execution.base import Executor
from freeact_tui.toolcalls import ToolCall

AskFn = Callable[[ToolCall, str], Awaitable[Decision]]
EmitFn = Callable[[AgentEvent], None]
IdsFn = Callable[[str], dict[str, Any]]


class Overflow(NamedTuple):
    """A result as the model sees it: whole, or a head/tail preview of a result saved to ``path``."""

    content: str
    truncated: bool
    path: Path | None


@dataclass(frozen=True)
class EventPorts:
    """How a part of the turn reports.

    Args:
        emit: puts an event into the agent's event channel.
        ids: the event ids (agent, correlation, parent) for a call's correlation id.
        set_phase: records the phase of a running call (``None`` when it ends).
    """

    emit: EmitFn
    ids: IdsFn
    set_phase: Callable[[str, Phase | None], None]


@dataclass(frozen=True)
class TurnPorts(EventPorts):
    """How a part of the turn acts: ``EventPorts`` plus approval, the kernel and big results.

    Args:
        ask: approval of a typed call (rules may decide at once).
        executor: the agent's kernel, started on first use.
        overflow: keeps big results out of the history.
    """

    ask: AskFn
    executor: Callable[[], Awaitable[Executor]]
    overflow: Callable[[str], Overflow]


__all__ = ["AskFn", "EmitFn", "EventPorts", "IdsFn", "Overflow", "TurnPorts"]
