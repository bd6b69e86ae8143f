"""The side panel under a real Textual app: live subagents, past sessions, keyboard and mouse, snapshot."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from textual.app import App, ComposeResult
from textual.widgets import Footer, Static

from freeact_tui.events import SubagentState, SubagentStatus
from freeact_tui.store import SessionInfo
from freeact_tui.tui.widgets.session_list import SessionList, as_datetime, format_size, relative_time
from freeact_tui.tui.widgets.side_panel import SidePanel
from freeact_tui.tui.widgets.subagent_list import SubagentList, format_elapsed

NOW = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)
CURRENT = "0b7c6a52-3f1e-4b9a-9d2c-5e8f7a6b1c2d"


class FakeClock:
    """A clock the test moves by hand, so elapsed and relative times are deterministic."""

    def __init__(self, now: datetime = NOW) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def _session(sid: str, title: str, ago: timedelta, messages: int, size: int) -> SessionInfo:
    return SessionInfo(
        id=sid,
        title=title,
        created=NOW - ago - timedelta(hours=1),
        updated=NOW - ago,
        cwd="/home/user/project",
        model="anthropic:claude-sonnet-4-5",
        message_count=messages,
        subagents={},
        size_bytes=size,
    )


SESSIONS = [
    _session(CURRENT, "Plot the CSV sales data by month", timedelta(seconds=20), 14, 18_432),
    _session(
        "1a2b3c4d-0000-4000-8000-000000000001", "Refactor the parser", timedelta(hours=3), 42, 2_400_000
    ),
    _session("2b3c4d5e-0000-4000-8000-000000000002", "", timedelta(days=2), 1, 900),
    _session("3c4d5e6f-0000-4000-8000-000000000003", "Old experiment", timedelta(days=90), 7, 40_960),
]


def _status(
    agent_id: str, state: SubagentState, task: str = "", corr: str = "", detail: str = ""
) -> SubagentStatus:
    return SubagentStatus(
        state=state, task=task, detail=detail, agent_id=agent_id, corr_id=corr or f"call-{agent_id}"
    )


class PanelHost(App[None]):
    BINDINGS = [("f2", "toggle_panel", "Panel")]

    def __init__(self, clock: FakeClock) -> None:
        super().__init__()
        self.clock = clock
        self.subagents_chosen: list[tuple[str, str]] = []
        self.sessions_chosen: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static("conversation", id="conversation")
        yield SidePanel(clock=self.clock)
        yield Footer()

    def action_toggle_panel(self) -> None:
        self.query_one(SidePanel).toggle()

    def on_side_panel_subagent_selected(self, message: SidePanel.SubagentSelected) -> None:
        self.subagents_chosen.append((message.agent_id, message.corr_id))

    def on_side_panel_session_chosen(self, message: SidePanel.SessionChosen) -> None:
        self.sessions_chosen.append(message.session_id)


def _feed(panel: SidePanel, clock: FakeClock) -> None:
    panel.update_subagent(_status("sub-7f3a", "queued", "Download the three quarterly reports"))
    panel.update_subagent(_status("sub-7f3a", "running", "Download the three quarterly reports"))
    panel.update_subagent(_status("sub-91c2", "running", "Summarise the PDF files in ./docs into one page"))
    clock.advance(5)
    panel.update_subagent(_status("sub-44d0", "queued", "Check the links in README.md"))
    panel.update_subagent(_status("sub-91c2", "waiting", "Summarise the PDF files in ./docs into one page"))
    clock.advance(67)
    panel.update_subagent(_status("sub-0e55", "running", "Run the test suite"))
    clock.advance(3)
    panel.update_subagent(_status("sub-0e55", "failed", "Run the test suite", detail="pytest not installed"))
    panel.set_sessions(SESSIONS, current_id=CURRENT)


def test_formatting_helpers() -> None:
    assert format_elapsed(7.9) == "7s"
    assert format_elapsed(65) == "1m 05s"
    assert format_elapsed(7380) == "2h 03m"
    assert (
        format_size(512) == "512 B" and format_size(18_432) == "18 KB" and format_size(2_400_000) == "2.3 MB"
    )
    assert relative_time(NOW - timedelta(seconds=5), NOW) == "just now"
    assert relative_time(NOW - timedelta(minutes=5), NOW) == "5m ago"
    assert relative_time(NOW - timedelta(days=90), NOW) == "2025-03-03"
    assert relative_time(None, NOW) == "unknown time"
    assert as_datetime("2025-06-01T11:00:00Z") == NOW - timedelta(hours=1)
    assert as_datetime(datetime(2025, 6, 1, 12)) == NOW  # naive means UTC
    assert as_datetime(NOW.timestamp()) == NOW
    assert as_datetime("yesterday") is None


async def test_subagents_live_states_and_elapsed_time() -> None:
    clock = FakeClock()
    app = PanelHost(clock)
    async with app.run_test(size=(120, 40)) as pilot:
        panel = app.query_one(SidePanel)
        assert panel.query_one("#subagents-empty").display
        _feed(panel, clock)
        await pilot.pause()
        listing = panel.subagents
        listing.refresh_elapsed()
        assert listing.display and not panel.query_one("#subagents-empty").display
        assert [e.agent_id for e in listing.entries] == ["sub-7f3a", "sub-91c2", "sub-44d0", "sub-0e55"]
        assert [e.state for e in listing.entries] == ["running", "waiting", "queued", "failed"]
        first = str(listing.get_option("sub-7f3a").prompt)
        assert "running" in first and "1m 15s" in first and "Download the three" in first
        assert "waiting for approval" in str(listing.get_option("sub-91c2").prompt)
        failed = str(listing.get_option("sub-0e55").prompt)
        assert "failed" in failed and "3s" in failed and "pytest not installed" in failed
        assert "queued" in str(listing.get_option("sub-44d0").prompt)
        assert "2 active" in str(panel.query_one("#subagents-title").render())
        # The one-second timer ticks running rows; a finished one stays frozen.
        clock.advance(60)
        await pilot.pause(1.2)
        assert "2m 15s" in str(listing.get_option("sub-7f3a").prompt)
        assert "3s" in str(listing.get_option("sub-0e55").prompt)
        panel.update_subagent(_status("sub-7f3a", "done", ""))
        clock.advance(100)
        listing.refresh_elapsed()
        done = str(listing.get_option("sub-7f3a").prompt)
        assert "done" in done and "2m 15s" in done and "Download the three" in done  # task kept
        panel.clear_subagents()
        await pilot.pause()
        assert listing.option_count == 0 and panel.query_one("#subagents-empty").display


async def test_enter_and_click_select_a_subagent() -> None:
    clock = FakeClock()
    app = PanelHost(clock)
    async with app.run_test(size=(120, 40)) as pilot:
        panel = app.query_one(SidePanel)
        _feed(panel, clock)
        await pilot.pause()
        panel.subagents.focus()
        await pilot.pause()
        assert panel.subagents.highlighted == 0  # focus shows the cursor on the first row
        await pilot.press("down", "enter")
        await pilot.pause()
        assert panel.subagents.highlighted == 1
        assert app.subagents_chosen == [("sub-91c2", "call-sub-91c2")]
        await pilot.click(SubagentList, offset=(4, 0))
        await pilot.pause()
        assert app.subagents_chosen[-1] == ("sub-7f3a", "call-sub-7f3a")


async def test_sessions_listed_current_marked_and_chosen_by_keyboard() -> None:
    clock = FakeClock()
    app = PanelHost(clock)
    async with app.run_test(size=(120, 40)) as pilot:
        panel = app.query_one(SidePanel)
        assert panel.query_one("#sessions-empty").display
        _feed(panel, clock)
        await pilot.pause()
        sessions = panel.sessions
        assert sessions.session_ids == [s.id for s in SESSIONS]
        current = str(sessions.get_option(CURRENT).prompt)
        assert "● Plot the CSV" in current and "current" in current and "1m ago · 14 msgs · 18 KB" in current
        assert "3h ago · 42 msgs · 2.3 MB" in str(sessions.get_option(SESSIONS[1].id).prompt)
        assert "(untitled 2b3c4d5e)" in str(sessions.get_option(SESSIONS[2].id).prompt)
        assert "1 msg ·" in str(sessions.get_option(SESSIONS[2].id).prompt)
        assert "current" not in str(sessions.get_option(SESSIONS[1].id).prompt)
        assert "Sessions (4)" in str(panel.query_one("#sessions-title").render())
        # Tab from the subagent list reaches the session list; arrows move; Enter chooses.
        panel.subagents.focus()
        await pilot.press("tab")
        assert app.focused is sessions
        assert sessions.highlighted == 0
        await pilot.press("down", "down", "enter")
        await pilot.pause()
        assert sessions.highlighted == 2
        assert app.sessions_chosen == [SESSIONS[2].id]
        # The mark moves; the highlighted row survives a refresh of the list.
        panel.set_current_session(SESSIONS[2].id)
        panel.set_sessions(SESSIONS)
        assert sessions.highlighted == 2
        assert "current" in str(sessions.get_option(SESSIONS[2].id).prompt)
        assert "current" not in str(sessions.get_option(CURRENT).prompt)


async def test_duplicate_or_damaged_sessions_do_not_break_the_list() -> None:
    clock = FakeClock()
    app = PanelHost(clock)
    async with app.run_test(size=(120, 40)) as pilot:
        panel = app.query_one(SidePanel)
        damaged = SessionInfo(**{**SESSIONS[1].__dict__, "damaged": "main.jsonl line 3: not JSON"})
        panel.set_sessions([SESSIONS[0], SESSIONS[0], damaged])
        await pilot.pause()
        assert panel.sessions.session_ids == [SESSIONS[0].id, SESSIONS[1].id]
        assert "damaged" in str(panel.sessions.get_option(SESSIONS[1].id).prompt)


async def test_panel_toggles() -> None:
    app = PanelHost(FakeClock())
    async with app.run_test(size=(120, 40)) as pilot:
        panel = app.query_one(SidePanel)
        assert panel.display
        await pilot.press("f2")
        assert not panel.display
        await pilot.press("f2")
        assert panel.display


def test_snapshot_panel_with_subagents_and_sessions(snap_compare) -> None:  # type: ignore[no-untyped-def]
    clock = FakeClock()
    app = PanelHost(clock)

    async def fill(pilot) -> None:  # type: ignore[no-untyped-def]
        panel = app.query_one(SidePanel)
        _feed(panel, clock)
        panel.subagents.refresh_elapsed()
        app.query_one(SessionList).focus()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 40), run_before=fill)
