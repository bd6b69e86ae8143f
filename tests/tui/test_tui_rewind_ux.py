"""/rewind and /undo as a user meets them: the user's own words, the numbers of what was done, a warning
before overwriting a hand edit, the cursor at the end of the restored prompt, and no note about a
withdrawn action sent to the model. Real agent, real kernel, real files; the model is scripted."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelRequest, UserPromptPart
from textual.pilot import Pilot
from textual.widgets import OptionList, Static

from freeact_tui.agent.user_shell import context_entry
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.text.userwords import user_words
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.confirm import ConfirmScreen
from freeact_tui.tui.screens.rewind import RewindScreen
from freeact_tui.tui.screens.undo import UndoScreen
from freeact_tui.tui.widgets.blocks import NoticeBlock
from freeact_tui.tui.widgets.prompt import PromptInput
from tests import helpers
from tests.scripted import Code, Script, script

pytestmark = pytest.mark.kernel
async_test = pytest.mark.asyncio(loop_scope="module")

SIZE = (110, 40)
executor = helpers.kernel
until = partial(helpers.until, limit=20.0)


def make_app(executor: KernelExecutor, work: Path, tmp_path: Path, model: Script) -> FreeactApp:
    config = {"skip_permissions": True, "subagent_pool_size": 0}
    return helpers.make_app(model, tmp_path / "sessions", work, config=config, executor=executor)


async def send(pilot: Pilot[Any], text: str) -> None:
    app = pilot.app
    assert isinstance(app, FreeactApp)
    await until(pilot, lambda: app.agent_ready and not app.main_screen.turn_running)
    await helpers.send(pilot, text)
    await pilot.pause(0.05)
    await until(pilot, lambda: not app.main_screen.turn_running)


def notices(app: FreeactApp) -> list[str]:
    return [str(b.text) for b in app.main_screen.conversation.query(NoticeBlock)]


def dialog_text(app: FreeactApp) -> str:
    return " ".join(str(w.render()) for w in app.screen.query(Static))


def prompts_sent(model: Script) -> list[str]:
    """The user prompts of the model's requests, as the model got them."""
    return [
        part.content
        for request in model.requests
        for message in request[-1:]
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart) and isinstance(part.content, str)
    ]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    (root / "a.txt").write_text("original\n")
    return root


def test_user_words_drop_notes_and_shell_output_even_with_fences_inside() -> None:
    shell = context_entry("cat notes.md", "```python\nprint(1)\n```\n\n[Note: not a note]\n", failed=False)
    failed = context_entry("false", "", failed=True)
    sent = f"[Note: the user undid the file changes of the last action.]\n\n{shell}\n\n{failed}\n\nfix it\n\nplease"
    assert user_words(sent) == "fix it\n\nplease"
    assert user_words("[Note: x] is what I typed") == "[Note: x] is what I typed"  # not a prefix: kept


@async_test
async def test_rewind_lists_the_users_words_counts_what_it_did_and_leaves_the_cursor_at_the_end(
    executor: KernelExecutor, tmp_path: Path, work: Path
) -> None:
    hello = work / "hello.txt"
    model = script([Code(f"open({str(hello)!r}, 'w').write('hi')", "c1")], ["made it"])
    app = make_app(executor, work, tmp_path, model)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "!echo from-the-shell")
        await until(pilot, lambda: any("from-the-shell" in o for o in helpers.outputs(app)), limit=30)
        await send(pilot, "create hello.txt")
        assert hello.exists()
        assert "[I ran `echo from-the-shell`" in prompts_sent(model)[0]  # the model did get the output

        await send(pilot, "/rewind")
        await until(pilot, lambda: isinstance(app.screen, RewindScreen))
        listed = str(app.screen.query_one(OptionList).get_option_at_index(0).prompt)
        assert "create hello.txt" in listed and "I ran" not in listed and "from-the-shell" not in listed
        await pilot.press("b")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        question = dialog_text(app)
        assert "Files: 0 restored, 1 removed (hello.txt)." in question
        assert "Files restored" not in question
        await pilot.press("y")
        await until(pilot, lambda: any("rewound" in n for n in notices(app)))
        assert not hello.exists()
        (done,) = [n for n in notices(app) if n.startswith("The conversation was rewound to before")]
        assert "Files: 0 restored, 1 removed (hello.txt)." in done
        prompt = app.main_screen.query_one(PromptInput)
        assert prompt.text == "create hello.txt"
        assert prompt.cursor_location == prompt.document.end
        await pilot.press("!")  # typing goes on after the restored words
        assert prompt.text == "create hello.txt!"


@async_test
async def test_rewind_and_undo_warn_before_overwriting_a_hand_edit_and_enter_keeps_it(
    executor: KernelExecutor, tmp_path: Path, work: Path
) -> None:
    f = work / "a.txt"
    model = script([Code(f"open({str(f)!r}, 'w').write('agent\\n')", "c1")], ["changed"])
    app = make_app(executor, work, tmp_path, model)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "change a.txt")
        assert f.read_text() == "agent\n"
        f.write_text("my own edit\n")  # by hand, after the turn

        await send(pilot, "/rewind")
        await until(pilot, lambda: isinstance(app.screen, RewindScreen))
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "edited outside the agent" in dialog_text(app)
        assert "a.txt" in dialog_text(app)
        await pilot.press("enter")  # the safe default: nothing is touched
        await until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
        await pilot.pause(0.2)
        assert f.read_text() == "my own edit\n"

        await send(pilot, "/undo")
        await until(pilot, lambda: isinstance(app.screen, UndoScreen))
        await pilot.press("y")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "1 file(s) edited outside the agent: undo anyway?" in dialog_text(app)
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
        await pilot.pause(0.2)
        assert f.read_text() == "my own edit\n"

        await send(pilot, "/undo")
        await until(pilot, lambda: isinstance(app.screen, UndoScreen))
        await pilot.press("y")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")  # only y overwrites
        await until(pilot, lambda: f.read_text() == "original\n")


@async_test
async def test_an_undo_note_about_a_withdrawn_action_never_reaches_the_model(
    executor: KernelExecutor, tmp_path: Path, work: Path
) -> None:
    f = work / "a.txt"
    model = script(
        ["hello"],
        [Code(f"open({str(f)!r}, 'w').write('two\\n')", "c1")],
        ["changed"],
        ["after the rewind"],
    )
    app = make_app(executor, work, tmp_path, model)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "say hello")
        await send(pilot, "change a.txt")
        await send(pilot, "/undo")
        await until(pilot, lambda: isinstance(app.screen, UndoScreen))
        await pilot.press("y")
        await until(pilot, lambda: f.read_text() == "original\n")
        assert app.agent is not None and "undid" in (app.agent.checkpointing.notes.pending or "")

        await send(pilot, "/rewind")  # to before "change a.txt": the undone action is withdrawn
        await until(pilot, lambda: isinstance(app.screen, RewindScreen))
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: any("rewound" in n for n in notices(app)))
        await send(pilot, "go on")
        last = prompts_sent(model)[-1]
        assert last.endswith("go on")
        assert "rewound the conversation" in last
        assert "undid" not in last


def test_the_demo_model_acts_on_the_users_words_not_on_a_rewind_note_before_them() -> None:
    from freeact_tui.demo.intents import parse_intent
    from freeact_tui.demo.model import _read_turn

    note = (
        "[Note: the user rewound the conversation to before their message “create a file hello.txt with hi”; "
        "the later messages were withdrawn.]"
    )
    shell = context_entry("seq 1 3", "1\n2\n3\n", failed=False)
    turn = _read_turn([ModelRequest(parts=[UserPromptPart(f"{note}\n\n{shell}\n\nwhat is 2**10")])])
    assert turn.prompt == "what is 2**10"
    assert parse_intent(turn.prompt).kind == "compute"
