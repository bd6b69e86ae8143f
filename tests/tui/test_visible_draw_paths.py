"""Every place that draws model, file, MCP or session text draws it through THE table (issue #39).

Hostile text — every class of the table: bidi overrides and isolates, zero-width characters, a
Hangul filler, a tag character, a soft hyphen, a C1 control, a line separator, a variation selector —
goes in as model text, thinking, code and its output, a file name, a toast, an MCP tool's name and
result, a session title; what the app writes to the terminal (Pilot, the real app and kernel), what
the CLI prints, what the ACP server sends and the headless refusal hold no raw character of the table.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from textual.widgets import OptionList
from textual.widgets._toast import Toast

from freeact_tui.acp.toolcall_view import describe
from freeact_tui.store import SessionStore
from freeact_tui.toolcalls import (
    CodeAction,
    JsonToolCall,
    ProgrammaticToolCall,
    ShellAction,
    ShellScript,
    SubagentTask,
)
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.file_picker import FilePicker
from freeact_tui.tui.screens.main import MainScreen
from freeact_tui.tui.widgets.blocks import ThoughtBlock
from freeact_tui.tui.widgets.blocks.action import tool_call_content
from freeact_tui.tui.widgets.prompt import PromptInput
from tests.cli.test_headless import run_scripted
from tests.helpers import main, ready, send, until
from tests.scripted import CODE_TOOL, Code, Think, script
from tests.tui import test_tui_app as shared
from tests.tui.test_hostile_repo_display import _run, dialog, screen_text, terminal_output

executor = shared.executor
make_app = shared.make_app
SIZE = (120, 40)

# One of each class of the table.
H = "\u202eRTL\u202c\u2066iso\u2069\u200b\u200d\u2060\ufeff\u3164\u00ad\U000e0041\x9b\u2028\ufe0f\u00a0\u180e"
BLANK_LOOKING = "\u115f\u1160\u3164\uffa0\u2800\u034f" + "".join(map(chr, range(0xFE00, 0xFE10)))
_TERMINAL = re.compile(r"\x1b\[[0-9;:?<=>]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]")


def hidden(char: str) -> bool:
    """The table, spelled out here independently of ``textsafe``: by category, plus what looks blank."""
    category = unicodedata.category(char)
    return (category[0] == "C" or category in ("Zl", "Zp", "Zs")) and char != " " or char in BLANK_LOOKING


def raw_table_characters(text: str, *, sequences: bool = False) -> list[str]:
    """The characters of the table in ``text`` (the app's own terminal sequences removed when ``sequences``)."""
    if sequences:
        text = _TERMINAL.sub("", text)
    return sorted({f"U+{ord(c):04X}" for c in text if hidden(c) and c not in "\n\r\t"})


def assert_clean(app: FreeactApp) -> None:
    found = raw_table_characters(terminal_output(app), sequences=True)
    assert not found, f"characters of the table reached the terminal raw: {found}"
    # H holds no "⟨": an escaped escape on screen is text made visible twice (garbled, if safe).
    assert "⟨U+27E8⟩" not in screen_text(app), "text made visible twice"


# -- what is drawn for approval, over generated text -------------------------------------------------

hostile = st.text(
    alphabet=st.one_of(st.characters(), st.sampled_from([*H, "\n", " ", "\t", "\r", "\x0c", "\x1b"])),
    max_size=80,
)


@settings(max_examples=300, deadline=None)
@given(hostile, hostile)
def test_every_kind_of_action_is_drawn_through_the_table(text: str, name: str) -> None:
    calls = [
        CodeAction(code=text),
        ShellAction(command=text),
        ShellScript(script=text),
        ProgrammaticToolCall(server=name, tool=name, args={"q": text}),
        JsonToolCall(tool_name=name, tool_args={name: text}),
        SubagentTask(prompt=text),
    ]
    for call in calls:
        drawn = tool_call_content(call).plain
        assert not raw_table_characters(drawn), (call, drawn)
        view = describe(call, {}, Path("/w"))
        assert not raw_table_characters(view.title), view.title
        assert "\n" not in view.title
        for content in view.content:
            assert not raw_table_characters(content.content.text)  # type: ignore[union-attr]


def test_acp_titles_say_that_more_follows_a_decoy_line() -> None:
    decoy = 'print("hello")\n' + "\n" * 80 + 'import os; os.system("touch X")'
    view = describe(CodeAction(code=decoy), {}, Path("/w"))
    assert view.title == 'print("hello") (+1 more line)'
    assert "⋯ 80 blank lines ⋯" in view.content[0].content.text  # type: ignore[union-attr]


def test_headless_refusal_names_the_hidden_line_and_shows_the_table(tmp_path: Path) -> None:
    decoy = f'print("hello{H}")\n' + "\n" * 80 + 'import os; os.system("touch X")'
    code, _, err = run_scripted(script([Code(decoy)]), tmp_path, "text")
    assert code == 2
    assert "(+1 more line)" in err
    assert not raw_table_characters(err), err


# -- the app (real app, real kernel) -----------------------------------------------------------------


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_model_text_thinking_code_and_output_reach_the_terminal_made_visible(
    make_app: Callable[..., FreeactApp],
) -> None:
    code = f"print({H!r})  # {H}"
    app = make_app(script([Think(f"Thinking {H}"), Code(code)], [f"Answer {H} done."]))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await send(pilot, f"hello {H}")
        await dialog(pilot)
        thought = main(app).conversation.query(ThoughtBlock).first()
        thought.query_one("Collapsible").collapsed = False  # type: ignore[attr-defined]
        await pilot.pause(0.3)
        assert_clean(app)
        assert "⟨U+202E⟩RTL⟨U+202C⟩" in screen_text(app)
        await pilot.press("y")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: isinstance(app.screen, MainScreen) and not main(app).turn_running)
        await pilot.pause(0.3)
        assert_clean(app)
        shown = screen_text(app)
        # the prompt, the thinking, the code's comment, its output and the answer: each made visible
        assert shown.count("⟨U+202E⟩RTL⟨U+202C⟩") >= 5, shown
        main(app).notify(f"Cannot read notes{H}.md", title=f"File{H}")  # a toast
        await until(pilot, lambda: bool(app.screen.query(Toast)))
        await pilot.pause(0.3)
        assert_clean(app)
        await pilot.press("ctrl+b")  # the side panel: sessions by title
        await pilot.pause(0.3)
        assert_clean(app)
        await send(pilot, "/sessions")  # the session picker
        await until(pilot, lambda: not isinstance(app.screen, MainScreen))
        await pilot.pause(0.3)
        assert_clean(app)
        assert "hello ⟨U+202E⟩RTL" in screen_text(app)


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_file_names_in_the_at_picker(make_app: Callable[..., FreeactApp], tmp_path: Path) -> None:
    (tmp_path / f"notes{H.replace(chr(0x2028), '')}.md").write_text("x")
    app = make_app(script(["ok"]))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        main(app).query_one(PromptInput).focus()
        await pilot.press("@")
        await until(pilot, lambda: isinstance(app.screen, FilePicker) and app.screen.shown == "")
        assert app.screen.query_one(OptionList).option_count == 1
        await pilot.pause()
        assert_clean(app)
        assert "notes⟨U+202E⟩RTL" in screen_text(app)


# -- stored sessions through the CLI -----------------------------------------------------------------

SESSION_ID = "3f1c2b9e-0000-4000-8000-0000000000bb"


@pytest.fixture
def hostile_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FREEACT_TUI_HOME", str(tmp_path / "home"))
    root = tmp_path / "sessions"
    SessionStore(root).session(SESSION_ID).append(
        [
            ModelRequest(parts=[UserPromptPart(f"title {H}")]),
            ModelResponse(
                parts=[
                    TextPart(f"answer {H}"),
                    ToolCallPart(f"mcp{H}", {"q": H}, tool_call_id="t1"),
                    ToolCallPart(CODE_TOOL, {"code": f"x = '{H}'"}, tool_call_id="c1"),
                ]
            ),
            ModelRequest(
                parts=[
                    ToolReturnPart(f"mcp{H}", f"result {H}", tool_call_id="t1"),
                    ToolReturnPart(CODE_TOOL, f"out {H}", tool_call_id="c1"),
                ]
            ),
            ModelResponse(parts=[TextPart("done")]),
        ]
    )
    return root


@pytest.mark.parametrize(
    "command", [["list"], ["show", SESSION_ID], ["export", SESSION_ID, "--format", "md"]]
)
def test_sessions_cli_prints_no_character_of_the_table(hostile_store: Path, command: list[str]) -> None:
    out = _run(*command, "--sessions-dir", str(hostile_store))
    assert not raw_table_characters(out), out
    assert "⟨U+27E8⟩" not in out, "text made visible twice"
    assert "⟨U+202E⟩RTL" in out


def _strings(value: object, skip: tuple[str, ...] = ("raw_input", "rawInput", "data")) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() if k not in skip for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def test_acp_replay_sends_no_character_of_the_table(hostile_store: Path) -> None:
    from freeact_tui.acp.replay import replay_updates

    messages = SessionStore(hostile_store).session(SESSION_ID).load().messages
    updates = list(replay_updates(messages, hostile_store))
    texts = [s for u in updates for s in _strings(u.model_dump())]  # the arguments as given aside (rawInput)
    assert texts and not raw_table_characters("\n".join(texts)), texts
    assert any("⟨U+202E⟩RTL" in t for t in texts)
