"""What each slash command does in the app (``/model``, ``/resume``, ``/theme``, …): parsed by
``tui.commands``, run here against the app's agent, config and screens."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from freeact_tui.store.sessions import SessionStore
from freeact_tui.tui import info_commands, status_commands
from freeact_tui.tui.checkpoint_commands import CheckpointHost
from freeact_tui.tui.commands import SlashCommand
from freeact_tui.tui.info_commands import InfoHost
from freeact_tui.tui.picker_commands import PickerHost

if TYPE_CHECKING:
    from pydantic_ai.models import Model


class SlashHost(InfoHost, PickerHost, CheckpointHost, Protocol):
    """What the slash commands need of their app (``FreeactApp``)."""

    theme: str  # settable here; the pickers only read it

    @property
    def chosen_model(self) -> str | Model | None: ...
    @property
    def agent_modules_loaded(self) -> asyncio.Event: ...
    @property
    def current_model(self) -> str | None: ...

    async def show_help(self) -> None: ...
    async def switch_agent(self, *, session_id: str | None, model: str | Model | None) -> None: ...
    async def action_quit(self) -> None: ...
    def run_worker(
        self, work: Coroutine[Any, Any, None], *, group: str, exclusive: bool, exit_on_error: bool
    ) -> object: ...


async def dispatch(app: SlashHost, command: SlashCommand) -> None:
    """Run a parsed slash command in ``app`` (the app's own state: its agent, config, theme)."""
    if command.name in _CHANGES_AGENT and app.main_screen.turn_running:
        app.notify(
            f"/{command.name} must wait until the turn ends (Esc cancels it).", severity="warning"
        )
        return
    if command.name in _PICKERS and not command.arg:
        app.run_worker(open_picker(app, command.name), group="picker", exclusive=True, exit_on_error=False)
        return
    handler = _HANDLERS.get(command.name)
    if handler is not None:
        await handler(app, command)


async def _resume(app: SlashHost, command: SlashCommand) -> None:
    store = SessionStore(app.config.resolved_sessions_dir())
    await app.switch_agent(session_id=store.resolve(command.arg), model=app.chosen_model)


async def _model(app: SlashHost, command: SlashCommand) -> None:
    log = app.main_screen.conversation
    if app.agent is not None and (problem := model_problem(app, command.arg)):
        # The current session, kernel and view stay as they are.
        app.notify(f"Model not changed: {problem}", severity="error", timeout=10)
        await log.error(problem, title=f"Cannot switch to {command.arg}")
        return
    session = app.agent.session_id if app.agent is not None else None
    await app.switch_agent(session_id=session, model=command.arg)
    if app.agent is not None:
        await log.notice(info_commands.protocol_text(app.agent, app.config), title="Model")


async def _theme(app: SlashHost, command: SlashCommand) -> None:
    if command.arg not in app.available_themes:
        names = ", ".join(sorted(app.available_themes))
        app.notify(f"Unknown theme {command.arg!r}. Available: {names}", severity="error")
        return
    app.theme = command.arg  # saved by the app's theme watcher


async def _checkpoints(app: SlashHost, command: SlashCommand) -> None:
    from freeact_tui.tui import checkpoint_commands  # loaded on use: not before the first screen

    await checkpoint_commands.run(app, command.name, command.arg)


async def _init(app: SlashHost, command: SlashCommand) -> None:
    if app.agent is None:
        app.notify("No model yet: set one first (/model).", severity="warning")
    else:
        app.main_screen.start_turn(status_commands.INIT_PROMPT)


async def _copy(app: SlashHost, command: SlashCommand) -> None:
    app.main_screen.action_copy_block()


_Handler = Callable[[SlashHost, SlashCommand], Awaitable[None]]

# The commands that replace the agent: they wait until the turn ends.
_CHANGES_AGENT = frozenset({"new", "resume", "model", "clear", "init"})
# The commands that open a picker when they are given no argument.
_PICKERS = frozenset({"model", "theme", "resume", "sessions"})
# Each command's handler, by its name.
_HANDLERS: dict[str, _Handler] = {
    "help": lambda app, command: app.show_help(),
    "new": lambda app, command: app.switch_agent(session_id=None, model=app.chosen_model),
    "resume": _resume,
    "model": _model,
    "theme": _theme,
    "export": lambda app, command: info_commands.export(app, command.arg),
    **dict.fromkeys(("undo", "diff", "rewind"), _checkpoints),
    "clear": lambda app, command: clear(app),
    **dict.fromkeys(
        ("status", "cost", "mcp", "config"),
        lambda app, command: status_commands.show(app, command.name, app.current_model),
    ),
    "memory": lambda app, command: status_commands.memory(app),
    "init": _init,
    **dict.fromkeys(("context", "compact"), lambda app, command: info_commands.context_command(app, command)),
    "copy": _copy,
    "skills": lambda app, command: info_commands.list_skills(app),
    "permissions": lambda app, command: info_commands.show_permissions(app),
    **dict.fromkeys(("quit", "exit"), lambda app, command: app.action_quit()),
}


async def clear(app: SlashHost) -> None:
    """``/clear``: a fresh conversation in a new session; the old one is kept, and the notice says how
    to come back to it (the model starts without the earlier turns: a view cleared over them would hide them)."""
    old = app.agent.session_id if app.agent is not None and app.agent.history else None
    await app.switch_agent(session_id=None, model=app.chosen_model)
    if app.agent is None:
        return
    kept = f" The previous session is kept: /resume {old[:8]} brings it back." if old else ""
    await app.main_screen.conversation.notice(
        f"A fresh conversation in a new session: the model starts without the earlier turns.{kept}", title="Clear"
    )


async def open_picker(app: SlashHost, name: str) -> None:
    """The picker of ``/name`` (the model's waits until pydantic-ai is imported: its model names)."""
    from freeact_tui.tui import picker_commands  # loaded on use: not before the first screen

    try:
        if name == "model" and not app.agent_modules_loaded.is_set():
            app.notify("Loading the model list…", timeout=3)
            await app.agent_modules_loaded.wait()
        await picker_commands.open_picker(app, name)
    except Exception as exc:  # a broken sessions dir or config: said, the app and session stay intact
        await app.main_screen.conversation.error(f"/{name} failed: {exc}")


def model_problem(app: SlashHost, model: str) -> str | None:
    """What keeps ``model`` from being used (a missing key, an unknown provider), found offline."""
    from freeact_tui.agent.models import ModelSetupError, resolve_model

    try:
        resolve_model(model, base_url=app.config.base_url, api_key_env=app.config.api_key_env)
    except ModelSetupError as exc:
        return str(exc)
    return None
