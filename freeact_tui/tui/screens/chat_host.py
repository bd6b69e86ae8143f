"""What the main screen needs of its app (``ChatHost``), kept apart so that the screen never imports
the app; and what the screen says of a session when it opens it (welcome line, read-only reason).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from freeact_tui.agent.agent import Agent
    from freeact_tui.project.config import Config
    from freeact_tui.project.sources import LaunchView
    from freeact_tui.tui.widgets.session_list import Clock


def welcome_text(model: str, working_dir: Path) -> str:
    """The first screen's lines: what runs where, and the keys that matter."""
    place = str(working_dir)
    home = str(Path.home())
    if place == home or place.startswith(home + "/"):
        place = "~" + place[len(home) :]
    return f"freeact · {model} · {place}\nEnter sends · Esc cancels a turn · Ctrl+P commands · ? help"


class ChatHost(Protocol):
    """What the main screen needs of its app (``FreeactApp``), so that the screen never imports it."""

    @property
    def config(self) -> Config: ...
    @property
    def launch(self) -> LaunchView:
        """The settings the first frame uses (``config`` may not be validated yet)."""
        ...
    @property
    def clock(self) -> Clock | None: ...
    @property
    def agent(self) -> Agent | None: ...
    @property
    def agent_ready(self) -> bool: ...
    @property
    def startup_error(self) -> str | None: ...

    async def handle_slash(self, text: str) -> str:
        """Run a slash command: ``"prompt"`` (not one), ``"done"`` or ``"invalid"``."""
        ...

    def prompt_text(self, text: str) -> str: ...
    def skill_entries(self) -> list[tuple[str, str]]: ...
    def action_copy_session_id(self) -> None: ...


@dataclass(frozen=True)
class ReadOnly:
    """Why a session opens read-only: the error shown in the log, and the prompt's placeholder."""

    title: str
    message: str
    placeholder: str


def read_only_reason(agent: Agent) -> ReadOnly | None:
    """Why ``agent``'s session must not be written here (open in another process, or damaged), if so."""
    if agent.session_locked is not None:
        pid = agent.session_locked.pid
        return ReadOnly(
            "Session open elsewhere",
            f"This session is open in another freeact-tui (pid {pid}), so it is read-only here: "
            "two windows writing one session would mix their turns.\n\nClose the other one and resume "
            "again, or press Ctrl+N or type /new to start a new session.",
            f"Read-only: open in pid {pid} · Ctrl+N or /new starts a new one",
        )
    if agent.load_damage is not None:
        return ReadOnly(
            "Session file damaged",
            f"{agent.load_damage}\n\nThe session is read-only so that nothing more is lost. "
            "Press Ctrl+N or type /new to continue in a new session (the damaged file stays as it is).",
            "Read-only session: Ctrl+N or /new starts a new one",
        )
    return None
