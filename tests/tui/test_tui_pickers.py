"""``/model``, ``/theme``, ``/resume`` and ``/sessions`` without an argument open a picker with the
current value marked; choosing applies it (issue #33). The real app under Pilot; ``/model``'s server
list comes from the fake OpenAI-compatible server over HTTP."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList

from freeact_tui.store.sessions import SessionStore
from freeact_tui.tui import picker_commands
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.picker import PickerScreen
from tests import helpers
from tests.fake_openai import FakeOpenAI
from tests.helpers import ready, send, until
from tests.scripted import script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]

SIZE = (120, 40)

executor = helpers.kernel
make_app = helpers.chat_app


async def picker(pilot: Pilot[None], command: str) -> PickerScreen:
    """Type ``command`` and wait for its picker."""
    await send(pilot, command)
    await until(pilot, lambda: isinstance(pilot.app.screen, PickerScreen))
    screen = pilot.app.screen
    assert isinstance(screen, PickerScreen)
    await pilot.pause()
    return screen


def values(screen: PickerScreen) -> list[str]:
    return [item.value for item in screen.shown]


def marked(screen: PickerScreen) -> list[str]:
    return [item.value for item in screen.shown if item.current]


def highlighted(screen: PickerScreen) -> str | None:
    option = screen.query_one(OptionList).highlighted_option
    return option.id if option is not None else None


async def test_model_picker_marks_the_model_in_use_and_lists_providers_with_keys(
    make_app: Callable[..., FreeactApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")  # anthropic's models are offered
    app = make_app("demo", config_kw={"model": "demo"})
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = await picker(pilot, "/model")
        assert marked(screen) == ["demo"] and highlighted(screen) == "demo"
        anthropic = [v for v in values(screen) if v.startswith("anthropic:")]
        assert "anthropic:claude-haiku-4-5" in anthropic
        assert all(
            item.detail == "ANTHROPIC_API_KEY is set" for item in screen.shown if item.value in anthropic
        )
        assert not [v for v in values(screen) if v.startswith("openai:")]  # no OPENAI_API_KEY here
        # Typing filters; Enter takes the highlighted model, which the app switches to.
        await pilot.press(*"haiku-4-5")
        assert values(screen) == ["anthropic:claude-haiku-4-5"]
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, PickerScreen))
        assert app.current_model == "demo"  # Esc changes nothing

        screen = await picker(pilot, "/model")
        await pilot.press(*"test", "enter")  # not listed: the typed name is taken
        await until(pilot, lambda: app.current_model == "test" and app.agent is not None)
        screen = await picker(pilot, "/model")
        assert marked(screen) == ["test"] and highlighted(screen) == "test"


async def test_model_picker_fetches_the_servers_models(
    make_app: Callable[..., FreeactApp], fake_openai: FakeOpenAI
) -> None:
    fake_openai.models = ["fake-model", "qwen2.5-coder-7b", "llama-3.1-8b"]
    app = make_app(None, config_kw={"model": "fake-model", "base_url": fake_openai.url})
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = await picker(pilot, "/model")
        await until(pilot, lambda: "qwen2.5-coder-7b" in values(screen))
        assert fake_openai.model_list_requests == 1
        assert values(screen) == ["fake-model", "demo", "llama-3.1-8b", "qwen2.5-coder-7b"]
        assert marked(screen) == ["fake-model"] and highlighted(screen) == "fake-model"
        assert screen.status == "4 models"
        await pilot.press("q", "w", "e", "n", "enter")
        await until(pilot, lambda: app.agent is not None and app.agent.model_name == "qwen2.5-coder-7b")
        assert app.current_model == "qwen2.5-coder-7b"
        assert fake_openai.count == 0  # listing models sent no chat request


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A server that accepts connections and never answers: its base URL."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"


def closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


async def test_model_picker_says_why_the_server_list_is_missing(
    make_app: Callable[..., FreeactApp], silent_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(picker_commands, "SERVER_TIMEOUT", 0.5)
    for base_url, said in [
        (silent_server, "/v1/models did not answer within 0.5 s."),
        (closed_port(), "Cannot reach http://127.0.0.1:"),
    ]:
        app = make_app(None, config_kw={"model": "local", "base_url": base_url})
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            screen = await picker(pilot, "/model")
            await until(pilot, lambda: said in screen.status)  # noqa: B023 - awaited in this iteration
            assert screen.query_one("#picker-status").has_class("-error")
            assert values(screen) == ["local", "demo"]  # the list stays usable
            await pilot.press("escape")


async def test_theme_picker_marks_the_theme_and_applies_the_choice(
    make_app: Callable[..., FreeactApp], isolated_home: Path
) -> None:
    app = make_app(script(["ok"]))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = await picker(pilot, "/theme")
        assert set(values(screen)) == set(app.available_themes)
        assert marked(screen) == ["freeact-dark"] and highlighted(screen) == "freeact-dark"
        await pilot.press("n", "o", "r", "d", "enter")
        await until(pilot, lambda: app.theme == "nord")
        assert 'theme = "nord"' in (isolated_home / "config" / "config.toml").read_text()
        screen = await picker(pilot, "/theme")
        assert marked(screen) == ["nord"]


@pytest.mark.parametrize("command", ["/resume", "/sessions"])
async def test_session_pickers_list_newest_first_and_resume_the_choice(
    make_app: Callable[..., FreeactApp], tmp_path: Path, command: str
) -> None:
    store = SessionStore(tmp_path / "sessions")
    older = store.new_session()
    older.append(helpers.conversation("Plot the CSV"))
    newer = store.new_session()
    newer.append(helpers.conversation("Summarise the notes"))
    app = make_app(script(["ok"]))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = await picker(pilot, command)
        assert values(screen) == [newer.id, older.id]
        assert [item.label for item in screen.shown] == ["Summarise the notes", "Plot the CSV"]
        assert all(item.detail.endswith(item.value[:8]) and " · " in item.detail for item in screen.shown)
        assert marked(screen) == []  # the session open now has no messages yet
        await pilot.press("down", "enter")
        await until(pilot, lambda: app.agent is not None and app.agent.session_id == older.id)
        screen = await picker(pilot, command)
        assert marked(screen) == [older.id] and highlighted(screen) == older.id
        await pilot.press("escape")
        # With an argument, as before.
        await send(pilot, f"/resume {newer.id[:8]}")
        await until(pilot, lambda: app.agent is not None and app.agent.session_id == newer.id)
