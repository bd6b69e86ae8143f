"""One ACP session: its agent, its config, its permission mode, its model and what its turns wait for."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from acp.schema import SessionMode

from freeact_tui.acp.client_files import ClientFiles
from freeact_tui.acp.effect_modes import effect_modes, set_effect_mode
from freeact_tui.acp.open_turn import OpenTurn
from freeact_tui.acp.plan import PlanWatch
from freeact_tui.acp.toolcall_view import ToolContent
from freeact_tui.acp.turn_queue import TurnQueue
from freeact_tui.agent.agent import Agent
from freeact_tui.events import UsageUpdate
from freeact_tui.project.config import Config, McpServerConfig

T = TypeVar("T")

ASK_MODE = "ask"
AUTO_MODE = "auto"


@dataclass(frozen=True)
class ModeSpec:
    """One approval mode as ACP offers it; ``approve_all``: every action no deny rule refuses runs."""

    id: str
    name: str
    description: str
    approve_all: bool = False

    def as_acp(self) -> SessionMode:
        return SessionMode(id=self.id, name=self.name, description=self.description)


MODE_TABLE: tuple[ModeSpec, ...] = (
    ModeSpec(ASK_MODE, "Ask", "Ask before every action no saved rule decides."),
    ModeSpec(
        AUTO_MODE,
        "Approve all",
        "Run every action no deny rule refuses, without asking (like --skip-permissions).",
        approve_all=True,
    ),
)
"""The approval modes offered over ACP, in order (more modes are rows here)."""

MODES_BY_ID = {spec.id: spec for spec in MODE_TABLE}


@dataclass
class AcpSession:
    """One ACP session: its agent, its permission mode and what its running turn waits for."""

    id: str
    agent: Agent
    config: Config
    """The config the agent was made from (the client's MCP servers in it); reopening starts from it."""
    working_dir: Path
    plans: PlanWatch
    files: ClientFiles | None = None
    """The client's ``fs/*`` methods, when it offers them (the file tools go through them)."""
    mode: str = ASK_MODE
    model: str = ""
    """The model chosen for this session (``model`` config option), as ``--model`` takes it."""
    asking: set[asyncio.Task[Any]] = field(default_factory=set)
    """The session's requests waiting for the client (permission requests, the trust question): a
    ``session/cancel`` cancels them."""
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    """Every task the session started (``start``: its announcements, its questions): none outlives it, its
    close (and the server's end) cancels them all."""
    cancel_requested: bool = False
    queue: TurnQueue = field(default_factory=TurnQueue)
    client_mcp: dict[str, McpServerConfig] = field(default_factory=dict)
    """The MCP servers the client passed (added to every config the session is opened with)."""
    commands: set[str] = field(default_factory=set)
    """The slash commands announced (editor commands and skills): ``/name args`` runs one."""
    usage: UsageUpdate | None = None
    """The main agent's last usage event (the session's tokens and cost so far), for a ``usage_update``."""
    tool_call_ids: set[str] = field(default_factory=set)
    """Every ``toolCallId`` sent in this session (``TurnUpdates`` gives none twice)."""
    trust_asked: bool = False
    """The client was asked (or needed not be) whether the folder's project files may apply."""
    turn: OpenTurn | None = None
    """The prompt running now (``session_end.run_turn``)."""
    waiting: dict[str, list[ToolContent]] = field(default_factory=dict)
    """The tool calls whose permission request waits for the client, with their content (a line from the
    client that cannot be read is noted on them: ``FreeactAcpAgent.unreadable_line``)."""
    silenced: bool = False
    """The session's end abandoned its turn: nothing more is sent for it (``session_end.settle``)."""

    def start(self, work: Coroutine[Any, Any, T], *, asking: bool = False) -> asyncio.Task[T]:
        """``work`` as a task the session owns (cancelled when it closes); ``asking``: a question to the
        client, which a ``session/cancel`` withdraws too."""
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        if asking:
            self.asking.add(task)
            task.add_done_callback(self.asking.discard)
        return task

    def cancel_tasks(self) -> None:
        """The session ends: every task it started is cancelled (nothing is sent for it afterwards)."""
        for task in list(self.tasks):
            task.cancel()

    def known_modes(self) -> list[str]:
        """The ids of the modes this session offers (the server's, then its agent's approval modes)."""
        return [*MODES_BY_ID, *(m.id for m in effect_modes(self.agent))]

    def set_mode(self, mode_id: str) -> bool:
        """The approval mode ``mode_id``, in the server (``approve_all``) and in the agent's gate (the app's
        modes); ``False`` when the session has no such mode (nothing changes). Setting a mode, opening a
        session with its stored mode and making its agent again all come here, so the two never disagree."""
        if mode_id not in self.known_modes():
            return False
        set_effect_mode(self.agent, mode_id)
        self.mode = mode_id
        return True

    @property
    def approve_all(self) -> bool:
        spec = MODES_BY_ID.get(self.mode)  # the app's approval modes (effect_modes) decide in the agent
        return spec is not None and spec.approve_all


__all__ = ["ASK_MODE", "AUTO_MODE", "MODES_BY_ID", "MODE_TABLE", "AcpSession", "ModeSpec"]
