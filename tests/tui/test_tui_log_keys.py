"""The log follows, typing reaches the prompt, keys do what they say (issue 19), driven by Pilot."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from textual._xterm_parser import XTermParser
from textual.pilot import Pilot

from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.tui import terminal_keys
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.widgets.blocks import ErrorBlock, ResponseBlock, UserMessageBlock
from freeact_tui.tui.widgets.conversation import ConversationLog
from freeact_tui.tui.widgets.follow_marker import NewOutputMarker
from tests import helpers
from tests.helpers import ready, send, until
from tests.scripted import Code, Script, Wait, script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]

SIZE = (100, 30)
LONG = "\n\n".join(f"Paragraph {i}: " + "words " * 30 for i in range(30))

executor = helpers.kernel


@pytest.fixture
def make_app(executor: KernelExecutor, tmp_path: Path) -> Callable[..., FreeactApp]:
    def make(s: Script | None, **config_kw: object) -> FreeactApp:
        config = {"subagent_pool_size": 0, **config_kw}
        return helpers.make_app(s, tmp_path / "sessions", tmp_path, config=config, executor=executor)

    return make


def bottom_visible(log: ConversationLog) -> bool:
    """The view is at the end of the log and the last block's last line is inside it."""
    last = log.blocks[-1]
    return (
        log.scroll_y == log.max_scroll_y
        and 0 < last.region.height
        and last.region.bottom <= log.region.bottom
    )


async def settled(pilot: Pilot[None], log: ConversationLog) -> None:
    """Wait until the newest block has been laid out (a streamed answer renders after its text arrives)."""
    await until(pilot, lambda: log.blocks[-1].region.height > 0)
    await pilot.pause()


async def test_new_prompt_after_scrolling_up_brings_the_log_back_and_follows(
    make_app: Callable[..., FreeactApp],
) -> None:
    gate = asyncio.Event()
    app = make_app(script([LONG], ["Second answer ", Wait(gate), "is here."]))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "first")
        await app.workers.wait_for_complete()
        screen = app.main_screen
        log = screen.conversation
        await pilot.pause()
        assert log.max_scroll_y > 0 and log.following
        # The reported sequence: Ctrl+L, PageUp, Shift+Tab, a new prompt.
        await pilot.press("ctrl+l", "pageup", "pageup")
        await pilot.pause()
        assert not log.following and log.scroll_y < log.max_scroll_y
        await pilot.press("shift+tab")
        assert app.focused is screen.prompt
        await send(pilot, "second")
        await until(pilot, lambda: "Second answer" in "".join(b.text for b in log.query(ResponseBlock)))
        await settled(pilot, log)
        assert log.following
        assert bottom_visible(log)
        assert not screen.query_one(NewOutputMarker).shown
        gate.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert bottom_visible(log)
        assert [b.text for b in log.query(UserMessageBlock)] == ["first", "second"]


async def test_marker_shows_new_output_below_and_jumps_to_it(make_app: Callable[..., FreeactApp]) -> None:
    gate = asyncio.Event()
    app = make_app(script([LONG], ["Streaming ", Wait(gate), "more " * 200]))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "first")
        await app.workers.wait_for_complete()
        screen = app.main_screen
        log = screen.conversation
        marker = screen.query_one(NewOutputMarker)
        await send(pilot, "second")
        await until(pilot, lambda: "Streaming" in "".join(b.text for b in log.query(ResponseBlock)))
        await pilot.pause()
        assert not marker.shown  # following: nothing is hidden below
        log.scroll_home(animate=False)  # the user scrolls up (as the mouse wheel does)
        await pilot.pause()
        assert not log.following
        gate.set()
        await app.workers.wait_for_complete()
        await until(pilot, lambda: marker.shown)
        assert marker.region.height == 1 and "new output below" in str(marker.render())
        assert log.scroll_y == 0  # the view stayed where the user put it
        await pilot.click(NewOutputMarker)
        await pilot.pause()
        assert log.following and not marker.shown
        assert bottom_visible(log)
        # The key does the same.
        log.scroll_home(animate=False)
        await pilot.pause()
        await log.notice("more output")
        await until(pilot, lambda: marker.shown)
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert log.following and not marker.shown and bottom_visible(log)


async def test_expand_collapse_keeps_the_view_on_the_latest_output(
    make_app: Callable[..., FreeactApp],
) -> None:
    app = make_app(script([LONG]))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "first")
        await app.workers.wait_for_complete()
        log = app.main_screen.conversation
        for _ in range(3):
            await log.notice("note")
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert log.following and bottom_visible(log)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert log.following and bottom_visible(log)


@pytest.mark.parametrize("away", ["tab", "ctrl+l"])
async def test_typing_while_the_log_has_focus_goes_to_the_prompt(
    make_app: Callable[..., FreeactApp], away: str
) -> None:
    app = make_app(script(["ok"]))
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.prompt.focus()
        await pilot.press("h", "i")
        await pilot.press(away)
        assert app.focused is not screen.prompt
        await pilot.press("space", "t", "h", "e", "r", "e", "exclamation_mark")
        assert app.focused is screen.prompt
        assert screen.prompt.text == "hi there!"
        # Keys bound in the log still work there (End scrolls, it is not typed).
        screen.conversation.focus()
        await pilot.press("end")
        assert screen.prompt.text == "hi there!"
        # Backspace edits the prompt and Enter sends it, also while the log has focus.
        await pilot.press(away, "question_mark", "question_mark")
        await pilot.press(away, "backspace")
        assert screen.prompt.text == "hi there!?"
        await pilot.press(away)
        assert app.focused is not screen.prompt
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert [b.text for b in screen.conversation.query(UserMessageBlock)] == ["hi there!?"]


async def test_alt_enter_inserts_a_newline_and_enter_sends(make_app: Callable[..., FreeactApp]) -> None:
    terminal_keys.install()
    # What tmux and xterm send for Alt+Enter, through Textual's own input parser.
    keys = [getattr(event, "key", None) for event in XTermParser().feed("a\x1b\rb\r")]
    assert keys == ["a", "alt+enter", "b", "enter"]
    app = make_app(script(["ok"]))
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.prompt.focus()
        await pilot.press("a", "alt+enter", "b")
        assert screen.prompt.text == "a\nb"
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert [b.text for b in screen.conversation.query(UserMessageBlock)] == ["a\nb"]


async def test_ctrl_c_cancels_a_running_turn_and_copies_when_idle(
    make_app: Callable[..., FreeactApp],
) -> None:
    gate = asyncio.Event()
    app = make_app(script(["Working ", Wait(gate), "never shown"]))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "start")
        screen = app.main_screen
        await until(
            pilot, lambda: "Working" in "".join(b.text for b in screen.conversation.query(ResponseBlock))
        )
        assert screen.turn_running
        await pilot.press("ctrl+c")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not screen.turn_running
        assert "never shown" not in "".join(b.text for b in screen.conversation.query(ResponseBlock))
        assert app.return_code is None and app.is_running  # it did not quit
        # Idle with a selection in the prompt: Ctrl+C copies, as before.
        screen.prompt.load_text("copy me")
        screen.prompt.focus()
        screen.prompt.select_all()
        await pilot.press("ctrl+c")
        assert app.clipboard == "copy me"
        # Idle, nothing selected: the draft is cleared, then (empty) a second press would quit.
        screen.prompt.move_cursor((0, 0))
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert screen.prompt.text == ""
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert any("to quit" in str(n.message) for n in app._notifications)
        assert app.is_running


async def test_failed_model_switch_keeps_the_session(
    make_app: Callable[..., FreeactApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    app = make_app(script(["first answer"]))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "hello")
        await app.workers.wait_for_complete()
        agent = app.agent
        assert agent is not None
        session_id = agent.session_id
        await send(pilot, "/model anthropic:claude-x")
        await pilot.pause()
        assert app.agent is agent and agent.session_id == session_id and agent.session is not None
        log = app.main_screen.conversation
        assert [b.text for b in log.query(UserMessageBlock)] == ["hello"]
        assert [b.text for b in log.query(ResponseBlock)] == ["first answer"]
        errors = [b.text for b in log.query(ErrorBlock)]
        assert errors and "ANTHROPIC_API_KEY" in errors[-1]
        assert any("ANTHROPIC_API_KEY" in str(n.message) for n in app._notifications)


async def test_palette_theme_choice_is_saved(make_app: Callable[..., FreeactApp]) -> None:
    from freeact_tui.project import paths
    from freeact_tui.project.config import read_toml

    app = make_app(None)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+p")
        await until(pilot, lambda: app.screen.__class__.__name__ == "CommandPalette")
        await pilot.press(
            *"screen"
        )  # Textual's own commands (screenshot, maximize, quit at once) are not listed
        await pilot.pause(0.5)
        from textual.command import CommandList

        shown = [str(o.prompt) for o in app.screen.query_one(CommandList).options]
        assert not any("Screenshot" in text or "Maximize" in text for text in shown), shown
        for _ in "screen":
            await pilot.press("backspace")
        await pilot.press(*"theme nord")
        await pilot.pause(0.5)
        await pilot.press("enter")  # "/theme nord"
        await until(pilot, lambda: app.theme == "nord")
        await until(pilot, lambda: paths.user_config_file().is_file())
    assert read_toml(paths.user_config_file())["theme"] == "nord"


async def test_first_screen_welcomes_with_model_dir_and_keys(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    app = make_app(script(["ok"]))
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        welcome = str(screen.conversation.query_one("#welcome").render())
        assert app.agent is not None
        assert app.agent.model_name in welcome
        assert str(tmp_path) in welcome or "~" in welcome
        for key in ("Enter", "Esc", "Ctrl+P"):
            assert key in welcome


async def test_long_output_lines_wrap_instead_of_being_cut() -> None:
    from textual.app import App, ComposeResult

    from freeact_tui.tui.widgets.blocks import AnsiLog

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield AnsiLog()

    app = One()
    async with app.run_test(size=(40, 12)) as pilot:
        log = app.query_one(AnsiLog)
        long = "".join(f"{i:02d}-" for i in range(30))  # 90 cells, coloured in part
        log.write(f"short\n\x1b[32m{long[:45]}\x1b[0m{long[45:]}\nend")
        await pilot.pause()
        width = log.scrollable_content_region.width
        assert log.virtual_size.width == width and log.max_scroll_x == 0  # nothing to scroll sideways
        rows = [log.render_line(y).text.rstrip() for y in range(log.size.height)]
        assert rows[0] == "short"
        # The long line continues on the next rows, every character kept, in order.
        wrapped = rows[1 : 1 + -(-len(long) // width)]
        assert len(wrapped) == 3 and "".join(wrapped) == long
        assert rows[1 + len(wrapped)] == "end"
        assert log.plain_text == f"short\n{long}\nend"
        # Narrower: more rows, still nothing lost.
        await pilot.resize_terminal(25, 12)
        await pilot.pause()
        width = log.scrollable_content_region.width
        rows = [log.render_line(y).text.rstrip() for y in range(log.size.height)]
        assert "".join(rows[1 : 1 + -(-len(long) // width)]) == long


async def test_ctrl_c_cancels_a_turn_waiting_in_an_approval_dialog(
    make_app: Callable[..., FreeactApp],
) -> None:
    from freeact_tui.tui.screens.approval import ApprovalScreen

    app = make_app(script([Code("print('never run')")], ["never shown"]))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "run something")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.pause(0.6)  # past any arming delay of the dialog: Ctrl+C is no approval key anyway
        await pilot.press("ctrl+c")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: not isinstance(app.screen, ApprovalScreen))
        screen = app.main_screen
        assert not screen.turn_running and app.is_running
        assert not screen.conversation.query(ResponseBlock)
        assert "never run" not in "".join(b.text for b in screen.conversation.blocks if hasattr(b, "text"))
