"""The Textual app driven by Pilot with a real Agent and scripted model streams (no kernel needed)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from freeact_tui.store.sessions import SessionStore
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.first_run import FirstRunScreen
from freeact_tui.tui.screens.main import MainScreen
from freeact_tui.tui.screens.picker import PickerScreen
from freeact_tui.tui.widgets.blocks import (
    ErrorBlock,
    NoticeBlock,
    ResponseBlock,
    ThoughtBlock,
    UserMessageBlock,
)
from freeact_tui.tui.widgets.prompt import PromptInput
from freeact_tui.tui.widgets.queued import QueuedMessages
from tests import helpers
from tests.helpers import main, ready, send, texts, until
from tests.scripted import Fail, Think, Wait, script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]

SIZE = (120, 40)

executor = helpers.kernel
make_app = helpers.chat_app


async def test_text_turn_streams_thought_and_response(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    s = script([Think("Weighing **options**."), "Hello *world*.\n\n```python\nprint(1)\n```\n"], chunk=4)
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "hi there")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert texts(app, UserMessageBlock) == ["hi there"]
        assert texts(app, ThoughtBlock) == ["Weighing **options**."]
        assert texts(app, ResponseBlock) == ["Hello *world*.\n\n```python\nprint(1)\n```\n"]
        thought = main(app).conversation.query_one(ThoughtBlock)
        assert thought.query_one("Collapsible").collapsed  # type: ignore[attr-defined]
        assert main(app).query_one(PromptInput).text == ""
        assert not main(app).turn_running


async def test_thought_stays_open_while_the_response_streams(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    gate = asyncio.Event()
    s = script([Think("Thinking it over."), "The answer ", Wait(gate), "is 7."])
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "think then answer")
        await until(pilot, lambda: "The answer" in "".join(texts(app, ResponseBlock)))
        await pilot.pause(0.2)
        thought = main(app).conversation.query_one(ThoughtBlock)
        assert not thought.query_one("Collapsible").collapsed  # type: ignore[attr-defined]
        assert thought.query_one("Markdown").region.height > 0  # shown above the streaming answer
        gate.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert thought.query_one("Collapsible").collapsed  # type: ignore[attr-defined]
        assert texts(app, ResponseBlock) == ["The answer is 7."]


async def test_prompt_keys_newline_and_history(make_app: Callable[..., FreeactApp], tmp_path: Path) -> None:
    app = make_app(script(["one"], ["two"]))
    async with app.run_test(size=SIZE) as pilot:
        prompt = main(app).query_one(PromptInput)
        prompt.focus()
        await pilot.press("f", "ctrl+j", "g")
        assert prompt.text == "f\ng"
        prompt.clear_input()
        await send(pilot, "first")
        await app.workers.wait_for_complete()
        await send(pilot, "second")
        await app.workers.wait_for_complete()
        await pilot.press(*"draft")
        await pilot.press("up")
        assert prompt.text == "second"
        await pilot.press("up")
        assert prompt.text == "first"
        await pilot.press("down")
        assert prompt.text == "second"
        await pilot.press("down")
        assert prompt.text == "draft"
        await pilot.press("escape")
        assert prompt.text == "draft"  # one Esc never loses a draft: it says how to clear
        await pilot.press("escape")
        assert prompt.text == ""
        await pilot.press("up")
        assert prompt.text == "draft"  # and a cleared draft comes back


async def test_escape_cancels_mid_stream_and_prompt_stays_usable(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    gate = asyncio.Event()
    s = script(["Partial answer ", Wait(gate), "never shown"], ["after cancel"])
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "go")
        await until(pilot, lambda: "Partial" in "".join(texts(app, ResponseBlock)))
        # typing while the turn runs is allowed; sending queues the message
        await pilot.press(*"next")
        await pilot.press("enter")
        assert main(app).query_one(QueuedMessages).items == ["next"]
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        notices = [b.text for b in main(app).conversation.query(NoticeBlock)]
        assert any("Cancelled (model)" in n for n in notices)
        assert "never shown" not in "".join(texts(app, ResponseBlock))
        assert not main(app).turn_running
        assert main(app).query_one(QueuedMessages).items == ["next"]  # a cancel keeps the queue waiting
        await pilot.press("shift+tab", "enter")  # the queued message back in the prompt
        assert main(app).query_one(PromptInput).text == "next"
        await pilot.press("enter")  # the typed prompt is sent now
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert texts(app, UserMessageBlock) == ["go", "next"]
        assert "after cancel" in texts(app, ResponseBlock)[-1]


async def test_agent_exception_becomes_error_block(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    app = make_app(script([Fail(RuntimeError("boom"))], ["recovered"]))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "break it")
        await app.workers.wait_for_complete()
        await pilot.pause()
        errors = [b.text for b in main(app).conversation.query(ErrorBlock)]
        assert any("boom" in e for e in errors)
        assert app.is_running
        await send(pilot, "again")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert texts(app, ResponseBlock)[-1] == "recovered"


async def test_no_model_starts_and_says_what_to_set(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    app = make_app(None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FirstRunScreen))
        await pilot.press("enter")  # continue without a model
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        errors = [b.text for b in main(app).conversation.query(ErrorBlock)]
        assert len(errors) == 1 and "--model" in errors[0] and "ANTHROPIC_API_KEY" in errors[0]
        assert "`" not in errors[0]  # plain text: no Markdown marks
        await send(pilot, "hello")
        await pilot.pause()
        assert not main(app).turn_running
        assert app.agent is None
        from freeact_tui.tui.widgets.blocks.guide import GuideBlock

        block = main(app).conversation.query(GuideBlock).last()
        guide = block.text
        assert "--model" in guide and "ANTHROPIC_API_KEY" in guide and "base_url" in guide
        # Drawn as Markdown, as the rest of the log: no marks shown raw.
        await until(pilot, lambda: bool(block.query("MarkdownBlock")) and block.region.height > 0)
        from freeact_tui.tui.widgets.blocks.markdown_fold import FoldedBlocks

        drawn = [str(p.render()) for p in block.query("MarkdownParagraph")]
        shown = "\n".join([*drawn, *(fold.plain_text for fold in block.query(FoldedBlocks))])
        assert shown and "**" not in shown and "`" not in shown, shown
        await send(pilot, "/model test")  # fixing the model from inside the app
        await pilot.pause()
        assert app.agent is not None and app.agent.model_name == "test"
        assert not main(app).conversation.query(ErrorBlock)


async def test_resume_renders_past_turns(make_app: Callable[..., FreeactApp], tmp_path: Path) -> None:
    first = make_app(script([Think("pondering"), "The answer is 42."]))
    async with first.run_test(size=SIZE) as pilot:
        await send(pilot, "What is the answer?")
        await first.workers.wait_for_complete()
        session_id = first.agent.session_id if first.agent else ""
    second = make_app(script(["Still 42."]), session_id=session_id)
    async with second.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert texts(second, UserMessageBlock) == ["What is the answer?"]
        assert texts(second, ResponseBlock) == ["The answer is 42."]
        assert texts(second, ThoughtBlock) == ["pondering"]
        await send(pilot, "Sure?")
        await second.workers.wait_for_complete()
        await pilot.pause()
        assert texts(second, ResponseBlock) == ["The answer is 42.", "Still 42."]


async def test_damaged_session_is_read_only_until_new(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    store = SessionStore(tmp_path / "sessions")
    session = store.new_session()
    session.append(
        [
            ModelRequest(parts=[UserPromptPart("old question")]),
            ModelResponse(parts=[TextPart("old answer")]),
            ModelRequest(parts=[UserPromptPart("later question")]),
        ]
    )
    path = session.history_path()
    lines = path.read_text().splitlines()
    lines[1] = lines[1][: len(lines[1]) // 2]  # damage a line that is not the last one
    path.write_text("\n".join(lines) + "\n")
    app = make_app(script(["fresh start"]), session_id=session.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        errors = [b.text for b in main(app).conversation.query(ErrorBlock)]
        assert len(errors) == 1
        assert str(path) in errors[0] and "line 2" in errors[0]
        assert main(app).read_only
        await send(pilot, "ignored")
        await pilot.pause()
        assert texts(app, UserMessageBlock) == ["old question"]
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert app.agent is not None and app.agent.session_id != session.id
        assert not main(app).read_only
        await send(pilot, "new question")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert texts(app, ResponseBlock) == ["fresh start"]
    assert path.read_text().splitlines()[1] == lines[1]  # the damaged file is left alone


async def test_slash_commands(
    make_app: Callable[..., FreeactApp], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    app = make_app(script(["first answer"], ["second answer"]))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "question one")
        await app.workers.wait_for_complete()
        assert app.agent is not None
        old_id = app.agent.session_id

        await send(pilot, "/export")
        await pilot.pause()
        exported = isolated_home / "data" / "exports" / f"freeact-{old_id[:8]}.md"  # not into the project
        assert "question one" in exported.read_text() and "first answer" in exported.read_text()

        await send(pilot, "/theme textual-light")
        await pilot.pause()
        assert app.theme == "textual-light"
        assert 'theme = "textual-light"' in (isolated_home / "config" / "config.toml").read_text()

        await send(pilot, "/clear")
        await pilot.pause()
        assert not main(app).conversation.query(UserMessageBlock)

        await send(pilot, "/new")
        await pilot.pause()
        assert app.agent.session_id != old_id

        await send(pilot, "/sessions")  # a picker of the stored sessions (tests/tui/test_tui_pickers.py)
        await until(pilot, lambda: isinstance(app.screen, PickerScreen))
        listing = [f"{i.label} {i.detail}" for i in app.screen.shown]  # type: ignore[attr-defined]
        assert any(old_id[:8] in row and "question one" in row for row in listing)
        await pilot.press("escape")

        await send(pilot, f"/resume {old_id[:8]}")
        await pilot.pause()
        assert app.agent.session_id == old_id
        assert texts(app, UserMessageBlock) == ["question one"]

        await send(pilot, "/bogus")
        await pilot.pause()
        assert app.agent.session_id == old_id
        assert not main(app).turn_running
        assert main(app).query_one(PromptInput).text == "/bogus"  # an unknown command is kept for editing


async def test_copy_session_id_and_status_bar(make_app: Callable[..., FreeactApp], tmp_path: Path) -> None:
    app = make_app(script(["ok"]))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.agent is not None
        session_label = str(main(app).query_one("#status-session").render())
        assert app.agent.session_id[:8] in session_label
        await pilot.press("f2")
        assert app.clipboard == app.agent.session_id
        await send(pilot, "count tokens")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "tokens" in str(main(app).query_one("#status-usage").render())
        assert main(app).query_one("#status-skip").has_class("-hidden")


async def test_session_file_lines_are_json(tmp_path: Path) -> None:
    # guards the damaged-session test above: it relies on one message a line
    store = SessionStore(tmp_path)
    session = store.new_session()
    session.append([ModelRequest(parts=[UserPromptPart("x")])])
    for line in session.history_path().read_text().splitlines():
        json.loads(line)


async def test_question_mark_on_empty_prompt_and_f1_open_help(make_app: Callable[..., FreeactApp]) -> None:
    from freeact_tui.tui.screens.help import HelpScreen

    app = make_app(script(["ok"]))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        prompt = main(app).query_one(PromptInput)
        prompt.focus()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen) and prompt.text == ""
        await pilot.press("w", "h", "y", "question_mark")  # inside text, ? is just a character
        assert prompt.text == "why?" and isinstance(app.screen, MainScreen)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await send(pilot, "/help")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        await send(pilot, "/theme no-such-theme")
        await pilot.pause()
        assert app.theme != "no-such-theme" and app.is_running


async def test_large_paste_is_sent_whole(make_app: Callable[..., FreeactApp]) -> None:
    from textual import events

    s = script(["got it"])
    app = make_app(s)
    pasted = "\n".join(f"line {i}: " + "x" * 60 for i in range(3000))  # ~200 KB with newlines
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        prompt = main(app).query_one(PromptInput)
        prompt.focus()
        app.post_message(events.Paste(pasted))  # as the terminal driver delivers it
        await pilot.pause()
        assert prompt.text == "[Pasted text #1 +3000 lines]"  # newlines in a paste do not send
        assert prompt.message == pasted
        await pilot.press("enter")
        await app.workers.wait_for_complete()
    sent = [p.content for p in s.requests[0][0].parts if isinstance(p, UserPromptPart)]
    assert sent == [pasted]


async def test_quit_and_exit_commands_leave_a_resume_hint(make_app: Callable[..., FreeactApp]) -> None:
    for command in ("/quit", "/exit"):
        app = make_app(script(["hello"]))
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "hi")
            await app.workers.wait_for_complete()
            session_id = app.agent.session_id if app.agent else ""
            await send(pilot, command)
            await pilot.pause()
            assert app.agent is None  # stopped
        assert app.return_code == 0
        assert app.resume_hint == f"Resume this session with: freeact-tui --session-id {session_id[:8]}"


async def test_quit_before_any_message_prints_no_hint(make_app: Callable[..., FreeactApp]) -> None:
    app = make_app(script(["unused"]))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/quit")
        await pilot.pause()
    assert app.resume_hint is None


async def test_unknown_theme_in_config_is_said(make_app: Callable[..., FreeactApp]) -> None:
    app = make_app(script(["unused"]), config_kw={"theme": "no-such-theme"})
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        messages = [n.message for n in app._notifications]
        assert any("Unknown theme 'no-such-theme'" in m and "freeact-dark" in m for m in messages), messages
        assert app.theme != "no-such-theme"


async def test_continuing_without_a_model_shows_the_kernel_as_it_is(tmp_path: Path) -> None:
    """The first-run screen's "Continue anyway": the kernel started at boot is shown ready, not "starting"."""
    (tmp_path / "work").mkdir()
    app = helpers.make_app(None, tmp_path / "sessions", tmp_path / "work", config={"subagent_pool_size": 0})
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FirstRunScreen), 30)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        kernel = main(app).query_one("#status-kernel")
        await until(pilot, lambda: "ready" in str(kernel.render()), 60)
