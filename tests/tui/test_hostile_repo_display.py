"""Model text, file names and stored sessions never drive the terminal (issue #28, "model text drives the terminal").

Each test feeds one injection through the real app (Textual under ``run_test``, a real kernel, a
scripted model) or the real CLI, records the characters the app would write to the terminal and
asserts that no escape sequence from the hostile text is among them, and that the user sees it.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from rich.console import Console
from textual.app import App
from textual.widgets import OptionList
from textual.widgets._toast import Toast
from typer.testing import CliRunner

from freeact_tui.cli.sessions import sessions_app
from freeact_tui.store import SessionStore
from freeact_tui.text.safe import sanitize_ansi, visible
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.file_picker import FilePicker
from freeact_tui.tui.screens.main import MainScreen
from freeact_tui.tui.widgets.blocks import ResponseBlock, ThoughtBlock
from freeact_tui.tui.widgets.prompt import PromptInput
from tests.helpers import dialog, main, ready, send, until
from tests.scripted import CODE_TOOL, Code, Think, script
from tests.tui import test_tui_app as shared

executor = shared.executor
make_app = shared.make_app
SIZE = (120, 40)

ERASE = "\x1b[2K\x1b[1G"  # erase the line, cursor to column 1: what came before is gone
OSC52 = "\x1b]52;c;aGFja2Vk\x07"  # write "hacked" to the clipboard
OSC2 = "\x1b]2;pwned\x07"  # set the window title
SPOOF = f'import posix; posix.system("touch X")  # {ERASE} │ print("hello, world")'
HOSTILE = (ERASE, "\x1b]52;", "\x1b]2;", "\x9b", "\u202e")


def terminal_output(app: App[object]) -> str:
    """What the app writes to the terminal for its current screen (the headless driver writes nothing)."""
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    assert update is not None
    return update.render_segments(app.console)  # type: ignore[union-attr]


def assert_nothing_hostile(output: str) -> None:
    found = [seq for seq in HOSTILE if seq in output]
    assert not found, f"escape sequences from untrusted text reached the terminal: {found!r}"


def screen_text(app: App[object]) -> str:
    """The screen as a user reads it: its characters, line by line."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True, force_terminal=True)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


# -- the shared helper -----------------------------------------------------------------------------


def test_visible_shows_every_control_and_keeps_lines() -> None:
    raw = "a\x1b[2Kb\x07c\x7fd\x9be\u202ef\u2066g\x00\r\nnext\tcol"
    assert visible(raw) == "a␛[2Kb␇c␡d⟨U+009B⟩e⟨U+202E⟩f⟨U+2066⟩g␀\nnext\tcol"
    assert visible("one\nline\ttab", multiline=False) == "one␊line␉tab"
    assert visible("plain text ✓") == "plain text ✓"


def test_kernel_output_keeps_colours_and_now_shows_c1_controls() -> None:
    # One module serves both: kernel output keeps SGR colours, drops other sequences, shows C1 controls.
    assert (
        sanitize_ansi("\x1b[31mred\x1b[0m\x1b]2;t\x07 \x9b2J\u202e")
        == "\x1b[31mred\x1b[0m ⟨U+009B⟩2J⟨U+202E⟩"
    )


# -- the conversation and the dialog (real app, real kernel) ---------------------------------------


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_dialog_shows_the_command_hidden_by_an_erase_line(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    app = make_app(script([Code(SPOOF)], ["ok"]))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "say hello")
        await dialog(pilot)
        output = terminal_output(app)
        assert_nothing_hostile(output)
        # The user reads the hidden command on the same line as the decoy, with the escapes shown.
        assert 'posix.system("touch X")  # ␛[2K␛[1G │ print("hello, world")' in screen_text(app)
        await pilot.press("n", "enter")
        await app.workers.wait_for_complete()
        assert not (tmp_path / "X").exists()


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_osc52_in_code_reaches_neither_dialog_nor_log(make_app: Callable[..., FreeactApp]) -> None:
    code = f"x = 1  # {OSC52}\nprint('done')"
    app = make_app(script([Code(code)], ["ok"]))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "run it")
        await dialog(pilot)
        assert_nothing_hostile(terminal_output(app))
        await pilot.press("y")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        await pilot.pause()
        output = terminal_output(app)
        assert_nothing_hostile(output)
        assert "x = 1  # ␛]52;c;aGFja2Vk␇" in screen_text(app)


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_osc52_in_an_answer_and_its_code_fence(make_app: Callable[..., FreeactApp]) -> None:
    answer = f"Copied {OSC52} for you.\n\n```python\nprint(1)  # {OSC52}\n```\n"
    app = make_app(script([answer]))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "hi")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: len(main(app).conversation.query(ResponseBlock)) == 1)
        await pilot.pause(0.3)
        assert_nothing_hostile(terminal_output(app))
        shown = screen_text(app)
        assert "Copied ␛]52;c;aGFja2Vk␇ for you." in shown
        assert "print(1)  # ␛]52;c;aGFja2Vk␇" in shown


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_osc2_title_in_thinking_and_a_tool_result(make_app: Callable[..., FreeactApp]) -> None:
    # The code prints the sequence: the kernel output path must stay clean as well.
    code = f"print({OSC2!r})"
    steps = [Think(f"Set the title {OSC2} quietly."), Code(code)], [f"Title {OSC2} set."]
    app = make_app(script(*steps))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "title")
        await dialog(pilot)
        thought = main(app).conversation.query(ThoughtBlock).first()
        thought.query_one("Collapsible").collapsed = False  # type: ignore[attr-defined]
        await pilot.pause(0.3)
        assert_nothing_hostile(terminal_output(app))
        await pilot.press("y")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        await pilot.pause(0.3)
        assert_nothing_hostile(terminal_output(app))
        assert "Title ␛]2;pwned␇ set." in screen_text(app)


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_file_names_with_escapes_in_the_at_picker(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    (tmp_path / f"notes{OSC52}.md").write_text("x")
    (tmp_path / f"title{OSC2}.txt").write_text("x")
    app = make_app(script(["ok"]))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        main(app).query_one(PromptInput).focus()
        await pilot.press("@")
        await until(pilot, lambda: isinstance(app.screen, FilePicker) and app.screen.shown == "")
        listed = app.screen.query_one(OptionList)
        assert listed.option_count == 2
        await pilot.pause()
        assert_nothing_hostile(terminal_output(app))
        shown = screen_text(app)
        assert "notes␛]52;c;aGFja2Vk␇.md" in shown and "title␛]2;pwned␇.txt" in shown
        await pilot.press("enter")  # the chosen name goes into the prompt, still shown, never sent
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        await pilot.pause()
        assert main(app).query_one(PromptInput).text.startswith("@")
        assert_nothing_hostile(terminal_output(app))


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_a_toast_naming_a_hostile_file(make_app: Callable[..., FreeactApp]) -> None:
    app = make_app(script(["ok"]))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(pilot)
        # Toasts carry error text (exceptions quote paths): every screen's notify goes through the app's.
        main(app).notify(f"Cannot read notes{OSC2}.md", title=f"File{OSC52}")
        await until(pilot, lambda: bool(app.screen.query(Toast)))
        await pilot.pause(0.3)
        assert_nothing_hostile(terminal_output(app))
        assert "Cannot read notes␛]2;pwned␇.md" in screen_text(app)


# -- stored sessions through the CLI ---------------------------------------------------------------

SESSION_ID = "3f1c2b9e-0000-4000-8000-0000000000aa"


@pytest.fixture
def hostile_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FREEACT_TUI_HOME", str(tmp_path / "home"))
    root = tmp_path / "sessions"
    SessionStore(root).session(SESSION_ID).append(
        [
            ModelRequest(parts=[UserPromptPart(f"hello {OSC2}")]),
            ModelResponse(
                parts=[
                    ThinkingPart(f"think {ERASE}"),
                    TextPart(f"answer {OSC52}"),
                    ToolCallPart(CODE_TOOL, {"code": SPOOF}, tool_call_id="c1"),
                ]
            ),
            ModelRequest(parts=[ToolReturnPart(CODE_TOOL, "out \x9b2J \u202etxt", tool_call_id="c1")]),
            ModelResponse(parts=[TextPart("done")]),
        ]
    )
    return root


def _run(*args: str) -> str:
    result = CliRunner().invoke(sessions_app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_sessions_show_prints_no_escapes(hostile_session: Path) -> None:
    out = _run("show", SESSION_ID, "--sessions-dir", str(hostile_session))
    assert_nothing_hostile(out)
    assert "\x1b" not in out
    assert "hello ␛]2;pwned␇" in out and "answer ␛]52;c;aGFja2Vk␇" in out
    assert 'posix.system("touch X")  # ␛[2K␛[1G │' in out
    assert "out ⟨U+009B⟩2J ⟨U+202E⟩txt" in out


def test_sessions_list_prints_no_escapes(hostile_session: Path) -> None:
    out = _run("list", "--sessions-dir", str(hostile_session))
    assert "\x1b" not in out and "␛]2;" in out


def test_export_markdown_holds_no_escapes(hostile_session: Path) -> None:
    out = _run("export", SESSION_ID, "--format", "md", "--sessions-dir", str(hostile_session))
    assert "\x1b" not in out and "\x9b" not in out and "\u202e" not in out
    assert "answer ␛]52;c;aGFja2Vk␇" in out and "> think ␛[2K␛[1G" in out
