"""What each slash command does in the app (``/model``, ``/resume``, ``/theme``, …): parsed by
``tui.commands``, run here on the chat screen (``MainScreen``), as every command module of ``tui/`` is.

The app owns the agent and runs the commands; the chat screen owns the view. A command takes the chat
screen: the screen's own parts (its log, its prompt, whether a turn runs) directly, the app's state
(agent, config, the model chosen, ``switch_agent``) through ``chat.host`` — the one interface the
screen has of its app (``tui/screens/chat_host.py``) — and Textual's services (screens, toasts,
workers, the theme) through ``chat.app``. So no command module needs an interface of its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from freeact_tui.store.sessions import SessionStore
from freeact_tui.tui import info_commands, status_commands
from freeact_tui.tui.commands import SlashCommand

if TYPE_CHECKING:
    from freeact_tui.tui.screens.main import MainScreen


async def dispatch(chat: MainScreen, command: SlashCommand) -> None:
    """Run a parsed slash command on the chat screen (the app's state through ``chat.host``)."""
    if command.name in _CHANGES_AGENT and chat.turn_running:
        chat.notify(
            f"/{command.name} must wait until the turn ends (Esc cancels it).", severity="warning"
        )
        return
    if command.name in _PICKERS and not command.arg:
        chat.app.run_worker(open_picker(chat, command.name), group="picker", exclusive=True, exit_on_error=False)
        return
    handler = _HANDLERS.get(command.name)
    if handler is not None:
        await handler(chat, command)


async def _resume(chat: MainScreen, command: SlashCommand) -> None:
    store = SessionStore(chat.host.config.resolved_sessions_dir())
    await chat.host.switch_agent(session_id=store.resolve(command.arg), model=chat.host.chosen_model)


async def _model(chat: MainScreen, command: SlashCommand) -> None:
    log = chat.conversation
    if chat.agent is not None and (problem := model_problem(chat, command.arg)):
        # The current session, kernel and view stay as they are.
        chat.notify(f"Model not changed: {problem}", severity="error", timeout=10)
        await log.error(problem, title=f"Cannot switch to {command.arg}")
        return
    session = chat.agent.session_id if chat.agent is not None else None
    await chat.host.switch_agent(session_id=session, model=command.arg)
    if chat.agent is not None:
        await log.notice(info_commands.protocol_text(chat.agent, chat.host.config), title="Model")


async def _theme(chat: MainScreen, command: SlashCommand) -> None:
    if command.arg not in chat.app.available_themes:
        names = ", ".join(sorted(chat.app.available_themes))
        chat.notify(f"Unknown theme {command.arg!r}. Available: {names}", severity="error")
        return
    chat.app.theme = command.arg  # saved by the app's theme watcher


async def _checkpoints(chat: MainScreen, command: SlashCommand) -> None:
    from freeact_tui.tui import checkpoint_commands  # loaded on use: not before the first screen

    await checkpoint_commands.run(chat, command.name, command.arg)


async def _init(chat: MainScreen, command: SlashCommand) -> None:
    if chat.agent is None:
        chat.notify("No model yet: set one first (/model).", severity="warning")
    else:
        chat.start_turn(status_commands.INIT_PROMPT)


async def _copy(chat: MainScreen, command: SlashCommand) -> None:
    chat.action_copy_block()


_Handler = Callable[["MainScreen", SlashCommand], Awaitable[None]]

# The commands that replace the agent: they wait until the turn ends.
_CHANGES_AGENT = frozenset({"new", "resume", "model", "clear", "init"})
# The commands that open a picker when they are given no argument.
_PICKERS = frozenset({"model", "theme", "resume", "sessions"})
# Each command's handler, by its name.
_HANDLERS: dict[str, _Handler] = {
    "help": lambda chat, command: show_help(chat),
    "new": lambda chat, command: chat.host.switch_agent(session_id=None, model=chat.host.chosen_model),
    "resume": _resume,
    "model": _model,
    "theme": _theme,
    "export": lambda chat, command: info_commands.export(chat, command.arg),
    **dict.fromkeys(("undo", "diff", "rewind"), _checkpoints),
    "clear": lambda chat, command: clear(chat),
    **dict.fromkeys(
        ("status", "cost", "mcp", "config"),
        lambda chat, command: status_commands.show(chat, command.name, chat.host.current_model),
    ),
    "memory": lambda chat, command: status_commands.memory(chat),
    "init": _init,
    **dict.fromkeys(("context", "compact"), lambda chat, command: info_commands.context_command(chat, command)),
    "copy": _copy,
    "skills": lambda chat, command: info_commands.list_skills(chat),
    "permissions": lambda chat, command: info_commands.show_permissions(chat),
    **dict.fromkeys(("quit", "exit"), lambda chat, command: chat.app.action_quit()),
}


async def clear(chat: MainScreen) -> None:
    """``/clear``: a fresh conversation in a new session; the old one is kept, and the notice says how
    to come back to it (the model starts without the earlier turns: a view cleared over them would hide them)."""
    old = chat.agent.session_id if chat.agent is not None and chat.agent.history else None
    await chat.host.switch_agent(session_id=None, model=chat.host.chosen_model)
    if chat.agent is None:
        return
    kept = f" The previous session is kept: /resume {old[:8]} brings it back." if old else ""
    await chat.conversation.notice(
        f"A fresh conversation in a new session: the model starts without the earlier turns.{kept}", title="Clear"
    )


async def open_picker(chat: MainScreen, name: str) -> None:
    """The picker of ``/name`` (the model's waits until pydantic-ai is imported: its model names)."""
    from freeact_tui.tui import picker_commands  # loaded on use: not before the first screen

    try:
        if name == "model" and not chat.host.agent_modules_loaded.is_set():
            chat.notify("Loading the model list…", timeout=3)
            await chat.host.agent_modules_loaded.wait()
        await picker_commands.open_picker(chat, name)
    except Exception as exc:  # a broken sessions dir or config: said, the app and session stay intact
        await chat.conversation.error(f"/{name} failed: {exc}")


def model_problem(chat: MainScreen, model: str) -> str | None:
    """What keeps ``model`` from being used (a missing key, an unknown provider), found offline."""
    from freeact_tui.agent.models import ModelSetupError, resolve_model

    try:
        config = chat.host.config
        resolve_model(
            model, base_url=config.base_url, api_key_env=config.api_key_env, project_keys=config.provider_keys
        )
    except ModelSetupError as exc:
        return str(exc)
    return None


async def show_help(chat: MainScreen) -> None:
    """``/help`` (F1, ``?``): the help screen, unless it is shown already."""
    from freeact_tui.tui.screens.help import HelpScreen  # (not for the first frame)

    if not isinstance(chat.app.screen, HelpScreen):
        await chat.app.push_screen(HelpScreen())
