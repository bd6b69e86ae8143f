"""freeact 0.11's stream events (names and fields), made from this app's events."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from freeact_tui import events as ours
from freeact_tui.freeact.toolcalls import ToolCall


class Phase(str, Enum):  # noqa: UP042 - as freeact defines it (str() differs from StrEnum)
    """Where a turn was when it was cancelled."""

    BETWEEN_TURNS = "between_turns"
    LLM_STREAMING = "llm_streaming"
    TOOL_EXECUTION = "tool_execution"


@dataclass(frozen=True, kw_only=True)
class AgentEvent:
    """Base of all events; ``agent_id`` names the agent (``main`` or a subagent's id)."""

    agent_id: str = ""
    corr_id: str = ""
    parent_corr_id: str = ""


@dataclass(frozen=True)
class ResponseChunk(AgentEvent):
    content: str


@dataclass(frozen=True)
class Response(AgentEvent):
    content: str


@dataclass(frozen=True)
class ThoughtsChunk(AgentEvent):
    content: str


@dataclass(frozen=True)
class Thoughts(AgentEvent):
    content: str


@dataclass(frozen=True)
class ToolOutput(AgentEvent):
    content: Any


@dataclass(frozen=True)
class CodeExecutionOutputChunk(AgentEvent):
    text: str


@dataclass(frozen=True)
class CodeExecutionOutput(AgentEvent):
    text: str | None
    images: list[Path]
    truncated: bool = False
    approval_rejected: bool = False

    def format(self) -> str:
        """The text, then a markdown link per image."""
        parts = [self.text] if self.text else []
        parts.extend(f"![Image]({image})" for image in self.images)
        return "\n".join(parts)


@dataclass(frozen=True)
class ApprovalRequest(AgentEvent):
    """An action waits: ``approve(True)`` runs it, ``approve(False)`` rejects it (the turn ends)."""

    tool_call: ToolCall
    _decide: Callable[[bool], None] = field(repr=False, compare=False)
    _wait: Callable[[], Awaitable[bool]] = field(repr=False, compare=False)

    def approve(self, decision: bool) -> None:
        """Decide; a no-op once decided (also by a cancellation or a timeout)."""
        self._decide(decision)

    async def approved(self) -> bool:
        """The decision, once made."""
        return await self._wait()


@dataclass(frozen=True, kw_only=True)
class Cancelled(AgentEvent):
    phase: Phase


def ids(event: ours.AgentEvent) -> dict[str, str]:
    return {
        "agent_id": event.agent_id,
        "corr_id": event.corr_id,
        "parent_corr_id": event.parent_corr_id or "",
    }


def cancelled_phase(phase: ours.Phase) -> Phase:
    if phase == ours.Phase.MODEL:
        return Phase.LLM_STREAMING
    if phase in (ours.Phase.EXECUTION, ours.Phase.APPROVAL, ours.Phase.SUBAGENT):
        return Phase.TOOL_EXECUTION
    return Phase.BETWEEN_TURNS
