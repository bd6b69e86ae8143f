"""``/model``, ``/theme``, ``/resume`` and ``/sessions`` without an argument: a picker of the values,
the current one marked; the value chosen runs the command with it (``/model NAME`` …), as typed.

The models listed: the one in use, the configured one, the offline demo, and the models pydantic-ai
knows of every provider whose key is set in the environment; with a ``base_url`` server (where every
name goes to that server) its ``GET /models`` list instead of the providers', fetched in a worker with a short timeout (a failure is said under the list).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from freeact_tui.project.project_env import EMPTY
from freeact_tui.store.sessions import SessionStore
from freeact_tui.tui.screens.picker import PickerItem, PickerLoadError, PickerScreen

if TYPE_CHECKING:
    from freeact_tui.project.config import Config
    from freeact_tui.tui.screens.main import MainScreen

SERVER_TIMEOUT = 3.0
"""Seconds the server's model list may take (the picker is usable meanwhile)."""


async def open_picker(chat: MainScreen, command: str) -> None:
    """Show the picker of ``command`` (``model``, ``theme``, ``resume`` or ``sessions``)."""
    if command == "model":
        screen = model_picker(chat.host.config, chat.host.current_model)
        await chat.app.push_screen(screen, _then(chat, "/model"))
    elif command == "theme":
        await chat.app.push_screen(
            PickerScreen("Theme", theme_items(sorted(chat.app.available_themes), chat.app.theme), noun="themes"),
            _then(chat, "/theme"),
        )
    else:
        current = chat.agent.session_id if chat.agent is not None else None
        infos = await asyncio.to_thread(SessionStore(chat.host.config.resolved_sessions_dir()).list)
        if not infos:
            chat.notify("No sessions yet.", title="Sessions")
            return
        await chat.app.push_screen(
            PickerScreen("Resume a session", session_items(infos, current), noun="sessions"),
            _resume(chat, current),
        )


def _then(chat: MainScreen, command: str) -> Callable[[str | None], Awaitable[None]]:
    async def run(value: str | None) -> None:
        if value:
            await chat.host.handle_slash(f"{command} {value}")

    return run


def _resume(chat: MainScreen, current: str | None) -> Callable[[str | None], Awaitable[None]]:
    async def run(value: str | None) -> None:
        if value and value == current:
            chat.notify("That is the session open now.")
        elif value:
            await chat.host.handle_slash(f"/resume {value}")

    return run


# -- the items ---------------------------------------------------------------------------------------


def theme_items(names: list[str], current: str) -> list[PickerItem]:
    """The themes, the current one marked."""
    return [PickerItem(name, name, current=name == current) for name in names]


class SessionRow(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def updated(self) -> datetime: ...
    @property
    def message_count(self) -> int: ...


def session_items(infos: Sequence[SessionRow], current: str | None) -> list[PickerItem]:
    """Stored sessions as listed (newest first): title, then date, size in messages and id."""
    return [
        PickerItem(
            info.id,
            " ".join((info.title or "").split())[:60] or "(untitled)",
            f"{info.updated:%Y-%m-%d %H:%M} · {info.message_count} msgs · {info.id[:8]}"
            + (" · ⚠ damaged" if getattr(info, "damaged", None) else ""),
            current=info.id == current,
        )
        for info in infos
    ]


def model_items(config: Config, current: str | None) -> list[PickerItem]:
    """The models usable now, without the network (the list every front end offers: ``agent.model_choices``)."""
    from freeact_tui.agent.model_choices import offline_choices

    return [
        PickerItem(c.name, c.name, c.detail, current=c.name == current)
        for c in offline_choices(config.model, config.base_url, current, config.provider_keys)
    ]


def model_picker(config: Config, current: str | None) -> PickerScreen:
    """The ``/model`` picker; with ``base_url``, the server's models are fetched while it is open."""
    base_url = config.base_url
    more = None
    if base_url:

        async def more() -> list[PickerItem]:
            names = await server_models(base_url, config.api_key_env, SERVER_TIMEOUT, config.provider_keys)
            return [
                PickerItem(name, name, f"served at {base_url}", current=name == current) for name in names
            ]

    loading = f"Fetching the models of {base_url} …" if base_url else ""
    return PickerScreen(
        "Model", model_items(config, current), more=more, loading=loading, typed="a model name", noun="models"
    )


async def server_models(
    base_url: str,
    api_key_env: str | None,
    seconds: float = SERVER_TIMEOUT,
    project_keys: Mapping[str, str] = EMPTY,
) -> list[str]:
    """The model ids an OpenAI-compatible server lists at ``GET {base_url}/models``.

    Raises:
        PickerLoadError: The server did not answer in ``seconds``, answered with an error, or
            with something that is not a model list (the message says which).
    """
    from freeact_tui.agent import model_choices

    try:
        return await model_choices.server_models(base_url, api_key_env, seconds, project_keys)
    except model_choices.ModelListError as exc:
        raise PickerLoadError(str(exc)) from None
