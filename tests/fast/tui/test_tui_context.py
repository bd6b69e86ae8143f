"""The context gauge, /context, /compact and the compaction marker in the real app under Pilot."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path

from textual.pilot import Pilot

from freeact_tui.project.config import Config
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.widgets.blocks import ErrorBlock, NoticeBlock, UserMessageBlock
from freeact_tui.tui.widgets.context_gauge import ContextGauge
from freeact_tui.tui.widgets.prompt import PromptInput
from tests import helpers
from tests.helpers import FILLER, SIZE, WINDOW
from tests.helpers import make_app as make_chat_app
from tests.windowed import WindowedModel

# Compaction runs model calls in the turn: a longer wait than the default.
until = partial(helpers.until, limit=20.0)


def make_app(model: WindowedModel, tmp_path: Path, session_id: str | None = None) -> FreeactApp:
    config = {"context_window": WINDOW, "enable_subagents": False, "skip_permissions": True}
    return make_chat_app(
        model.model(),
        tmp_path / "sessions",
        tmp_path,
        config=config,
        session_id=session_id,
        eager_kernel=False,
    )


async def send(pilot: Pilot[None], app: FreeactApp, text: str) -> None:
    await until(pilot, lambda: app.agent_ready)
    prompt = app.main_screen.query_one(PromptInput)
    prompt.load_text(text)
    prompt.focus()
    await pilot.press("enter")
    await pilot.pause()
    await until(pilot, lambda: not app.main_screen.turn_running)
    await pilot.pause()


def notices(app: FreeactApp, title: str) -> list[str]:
    return [b.text for b in app.main_screen.conversation.query(NoticeBlock) if b.border_title == title]


def gauge(app: FreeactApp) -> ContextGauge:
    return app.main_screen.query_one(ContextGauge)


async def test_gauge_colours_and_auto_compaction_marker(tmp_path: Path) -> None:
    model = WindowedModel(WINDOW)
    app = make_app(model, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.agent_ready)
        assert str(gauge(app).content).startswith("ctx ~")  # before any answer: an estimate
        seen: set[str] = set()
        for i in range(12):
            await send(pilot, app, f"FACT: the code of item{i} is c{i}. {FILLER}")
            g = gauge(app)
            seen |= {c for c in ("-warning", "-error") if g.has_class(c)}
            assert g.usage is not None and f"{g.usage.fraction:.0%}" in str(g.content)
        assert "-warning" in seen  # it passed 70 % before compacting at 85 %
        marks = notices(app, "Context compacted")
        assert (
            marks and "Compacted automatically" in marks[0] and "FACT: the code of item0 is c0." in marks[0]
        )
        # The earlier turns stay visible in the log.
        prompts = [b.text for b in app.main_screen.conversation.query(UserMessageBlock)]
        assert prompts[0].startswith("FACT: the code of item0 is c0.") and len(prompts) == 12
        assert gauge(app).usage is not None and gauge(app).usage.fraction < 0.85  # type: ignore[union-attr]
        session_id = app.agent.session_id if app.agent else ""
        assert not list(app.main_screen.conversation.query(ErrorBlock))

    resumed = make_app(WindowedModel(WINDOW), tmp_path, session_id=session_id)
    async with resumed.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: resumed.agent_ready)
        await pilot.pause()
        log = resumed.main_screen.conversation
        while log.earlier:  # a resumed session draws its last turns first; Home brings the earlier ones
            await log.show_earlier(to_top=True)
            await pilot.pause()
        prompts = [b.text for b in log.query(UserMessageBlock)]
        assert len(prompts) == 12  # the whole transcript, though the model sees the compacted history
        assert notices(resumed, "Context compacted")  # the marker where it happened
        assert resumed.agent is not None and len(resumed.agent.history) < len(resumed.agent.transcript)
        await send(pilot, resumed, "What is the code of item1?")
        assert resumed.agent.history[-1].parts[0].content == "The code of item1 is c1."  # type: ignore[union-attr]


async def test_context_and_compact_commands(tmp_path: Path) -> None:
    model = WindowedModel(WINDOW)
    app = make_app(model, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "/compact")
        assert notices(app, "Compact") == ["Nothing to compact yet: the recent turns are kept verbatim."]
        for i in range(3):
            await send(pilot, app, f"FACT: the code of item{i} is c{i}. {FILLER}")
        await send(pilot, app, "/context")
        report = notices(app, "Context")[-1]
        for row in ("system prompt", "tools", "history", "tool results", "images", "total"):
            assert row in report
        assert "Window: 3,000 tokens (from the setting)" in report and "estimate" in report
        before = len(app.agent.history) if app.agent else 0
        await send(pilot, app, "/compact item codes")
        await until(pilot, lambda: bool(notices(app, "Context compacted")))
        assert "by /compact" in notices(app, "Context compacted")[0]
        assert "focus: item codes" in notices(app, "Context compacted")[0]
        assert app.agent is not None and len(app.agent.history) < before
        await pilot.pause()
        assert str(gauge(app).content).startswith("ctx ")
        activity = app.main_screen.status_bar.query_one("#status-activity")
        assert activity.has_class("-hidden")  # the progress indicator is gone once it is done


async def test_escape_cancels_a_compaction_and_nothing_changes(tmp_path: Path) -> None:
    model = WindowedModel(WINDOW, hold=asyncio.Event())
    app = make_app(model, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        for i in range(3):
            await send(pilot, app, f"FACT: the code of item{i} is c{i}. {FILLER}")
        assert app.agent is not None and app.agent.session is not None
        history = list(app.agent.history)
        path = app.agent.session.history_path()
        lines = path.read_text().splitlines()
        prompt = app.main_screen.query_one(PromptInput)
        prompt.load_text("/compact")
        await pilot.press("enter")
        await until(pilot, lambda: model.summaries == 1)
        activity = app.main_screen.status_bar.query_one("#status-activity")
        assert "compacting" in str(activity.content) and not activity.has_class("-hidden")
        await pilot.press("escape")
        await until(pilot, lambda: not app.main_screen.turn_running)
        await pilot.pause()
        assert app.agent.history == history and path.read_text().splitlines() == lines
        assert not notices(app, "Context compacted") and activity.has_class("-hidden")
        assert not list(app.main_screen.conversation.query(ErrorBlock))


def test_snapshot_context_report_with_the_gauge_in_warning(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The gauge past 70 % (warning colour) and the /context report (reviewed as a picture)."""
    config = Config(
        sessions_dir=tmp_path / "sessions",
        working_dir=tmp_path,
        context_window=WINDOW,
        enable_subagents=False,
        system_prompt="You are a test agent.",  # the built-in one names the (temporary) working dir
    )
    model = WindowedModel(WINDOW)
    app = FreeactApp(
        config, model=model.model(), session_id="6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b", eager_kernel=False
    )

    async def before(pilot: Pilot[None]) -> None:
        app.animation_level = "none"
        for i in range(10):  # past 70 % of the window, short of compaction at 85 %
            await send(pilot, app, f"FACT: the code of item{i} is c{i}. {FILLER}")
        await send(pilot, app, "/context")
        app.main_screen.query_one(PromptInput).cursor_blink = False
        assert gauge(app).has_class("-warning")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=before)
