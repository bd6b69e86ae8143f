"""The app as the chat screen sees it (``ChatHost``), and what the screen says of a session when it
opens it (welcome line, read-only reason).

One design for the screen and the app: the app (``FreeactApp``) owns the agent, the config and the
choice of model, and runs the slash commands; the chat screen (``MainScreen``) owns the view (log,
prompt, whether a turn runs). The screen knows its app by ``ChatHost`` alone: the app imports the
screen, and the import contracts count type-only imports too, so the screen may name the app only
by an interface below both. The command modules (``tui/slash_dispatch.py`` and the ``*_commands.py``
it calls) take the chat screen and reach the app through this same interface (``chat.host``) and
Textual's services through ``chat.app``: one interface, not one per command module.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import asyncio

    from pydantic_ai.models import Model

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
    """The app (``FreeactApp``) as its chat screen and the commands run on it see it: its state (the agent,
    the config, the model) and what only the app does (run a slash command, open another agent)."""

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

    @property
    def chosen_model(self) -> str | Model | None:
        """The model the app was started with or switched to (``None``: the config's)."""
        ...
    @property
    def current_model(self) -> str | None:
        """The model in use as the user named it (``provider:name``), else the agent's own name."""
        ...
    @property
    def agent_modules_loaded(self) -> asyncio.Event:
        """Set once pydantic-ai is imported (the ``/model`` picker lists its models)."""
        ...

    async def switch_agent(self, *, session_id: str | None, model: str | Model | None) -> None:
        """Stop the agent and open another one (a new or resumed session, another model)."""
        ...


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
