"""A stalled model request in the TUI: a live line ``waiting for the model · N s · Esc cancels`` in the
status bar, counting up, gone once the model speaks or the turn is cancelled with Esc. The real app
under Pilot, the fake OpenAI server stalling."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from freeact_tui.agent import model_call
from freeact_tui.project.config import Config
from freeact_tui.tui.app import FreeactApp
from tests import helpers
from tests.fake_openai import FakeOpenAI, Reply, Stall

LINE = re.compile(r"^waiting for the model · (\d+) s · Esc cancels$")


def seconds_shown(app: FreeactApp) -> int | None:
    found = LINE.match(app.main_screen.status_bar.activity)
    return int(found.group(1)) if found else None


@pytest.fixture(autouse=True)
def quick_notice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_call, "WAIT_AFTER", 1.0)
    monkeypatch.setattr(model_call, "WAIT_EVERY", 0.25)


def app_on(server: FakeOpenAI, tmp_path: Path) -> FreeactApp:
    config = Config(
        sessions_dir=tmp_path / "sessions", working_dir=tmp_path, subagent_pool_size=0, base_url=server.url
    )
    return FreeactApp(config, model="local-model", eager_kernel=False)


async def test_a_silent_model_shows_a_live_wait_that_esc_cancels(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.script(Stall(None))
        app = app_on(server, tmp_path)
        async with app.run_test(size=helpers.SIZE) as pilot:
            await helpers.send(pilot, "hello")
            await helpers.until(pilot, lambda: seconds_shown(app) is not None, limit=30)
            first = seconds_shown(app)
            assert first is not None and first >= 1
            await helpers.until(pilot, lambda: (seconds_shown(app) or 0) >= first + 1, limit=30)  # counts up
            await pilot.press("escape")
            await helpers.until(pilot, lambda: not app.main_screen.turn_running, limit=30)
            assert seconds_shown(app) is None
            assert server.count == 1


async def test_the_wait_line_goes_when_the_model_speaks(tmp_path: Path) -> None:
    from freeact_tui.tui.widgets.blocks import ResponseBlock

    with FakeOpenAI() as server:
        server.script(Reply("late answer", chunk=100, delay=2.0))  # silent for 2 s, then the whole answer
        app = app_on(server, tmp_path)
        async with app.run_test(size=helpers.SIZE) as pilot:
            await helpers.send(pilot, "hello")
            await helpers.until(pilot, lambda: seconds_shown(app) is not None, limit=30)
            log = app.main_screen.conversation
            await helpers.until(
                pilot, lambda: any(b.text == "late answer" for b in log.query(ResponseBlock)), limit=30
            )
            await helpers.until(pilot, lambda: not app.main_screen.turn_running, limit=30)
            assert seconds_shown(app) is None
