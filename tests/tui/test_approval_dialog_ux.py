"""The approval dialog as a user meets it (issue #29): rejecting in one line, rejecting with an
instruction the agent acts on, Ctrl+Q asking while something runs, the dialog at 80×24.

Real app under ``run_test`` with Pilot, real kernel, scripted model.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelRequest, ToolReturnPart
from rich.console import Console
from textual.widgets import Input

from freeact_tui.toolcalls import CodeAction, ShellAction
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.approval import ApprovalScreen
from freeact_tui.tui.widgets.blocks import ActionBlock, ExecutionOutputBlock, ResponseBlock
from tests.helpers import dialog, main, send, until
from tests.scripted import Code, Wait, script
from tests.tui import test_tui_app as shared

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]
executor = shared.executor
make_app = shared.make_app


def tool_returns(app: FreeactApp) -> list[str]:
    """What the model was (or will be) told about its actions: the session's tool returns."""
    assert app.agent is not None
    return [
        str(p.content)
        for m in app.agent.history
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    ]


def screen_lines(app: FreeactApp) -> list[str]:
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True, force_terminal=True)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text().splitlines()


# -- rejecting ---------------------------------------------------------------------------------------


async def test_a_rejected_shell_part_is_one_line_never_a_traceback(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    s = script([Code(f"print('before')\n!touch {tmp_path}/x.txt\nprint('after')")], ["ok"])
    app = make_app(s)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "touch it")
        await dialog(pilot, CodeAction)
        await pilot.press("y")
        await dialog(pilot, ShellAction)
        await pilot.press("n", "enter")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: not main(app).turn_running)
        [output] = [b.text for b in main(app).conversation.query(ExecutionOutputBlock)]
        assert output == "before\nrejected: the cell stopped here (ApprovalRejectedError)"
        [result] = tool_returns(app)
        assert "Traceback" not in result and "client.py" not in result
        assert f"The user rejected `touch {tmp_path}/x.txt`" in result
        assert not (tmp_path / "x.txt").exists()
        assert len(s.requests) == 1  # a plain rejection still ends the turn


async def test_reject_with_an_instruction_tells_the_model_and_the_turn_goes_on(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    s = script([Code(f"open({str(tmp_path / 'a.txt')!r}, 'w').write('x')")], ["Fine, I will use pathlib."])
    app = make_app(s)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "write a file")
        screen = await dialog(pilot, CodeAction)
        await pilot.press("n")
        line = screen.query_one("#approval-instruction", Input)
        assert line.has_focus and screen.is_current  # n alone decides nothing yet
        await pilot.press(*"use pathlib")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: not main(app).turn_running)
        assert len(s.requests) == 2  # the model was asked again: the turn went on
        [result] = tool_returns(app)
        assert result == "The user rejected this code action. Instead, the user says: use pathlib"
        [block] = main(app).conversation.query(ActionBlock)
        assert block.status == "rejected · you said: use pathlib" and block.has_class("-rejected")
        assert [b.text for b in main(app).conversation.query(ResponseBlock)] == ["Fine, I will use pathlib."]
        assert not (tmp_path / "a.txt").exists()


async def test_reject_a_shell_part_with_an_instruction(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    s = script([Code(f"!rm -rf {tmp_path}/keep")], ["Understood, I will leave it."])
    (tmp_path / "keep").mkdir()
    app = make_app(s)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "clean up")
        await dialog(pilot, ShellAction)
        await pilot.press("n", *"keep that dir", "enter")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: not main(app).turn_running)
        assert len(s.requests) == 2
        [result] = tool_returns(app)
        assert "Traceback" not in result
        assert result.endswith(
            f"The user rejected `rm -rf {tmp_path}/keep`; the action was stopped. Instead, the user says: keep that dir"
        )
        assert (tmp_path / "keep").is_dir()


async def test_escape_on_the_instruction_line_goes_back_to_the_keys(
    make_app: Callable[..., FreeactApp],
) -> None:
    s = script([Code("print('approved after all')")], ["done"])
    app = make_app(s)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "print")
        screen = await dialog(pilot, CodeAction)
        await pilot.press("n", "y", "escape")  # y types into the line; Esc closes it, the dialog stays
        assert screen.is_current and not screen.rejecting
        assert screen.query_one("#approval-instruction", Input).value == "y"
        await pilot.press("y")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: not main(app).turn_running)
        assert [b.text for b in main(app).conversation.query(ExecutionOutputBlock)] == ["approved after all"]


# -- Ctrl+Q --------------------------------------------------------------------------------------------


async def test_ctrl_q_during_a_turn_asks_first_and_a_second_quits(
    make_app: Callable[..., FreeactApp],
) -> None:
    gate = asyncio.Event()  # never set: the model stream stays open
    app = make_app(script(["Thinking about it", Wait(gate)]))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "long question")
        await until(pilot, lambda: main(app).turn_running)
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert app.return_code is None and main(app).turn_running  # still running, nothing cancelled
        assert [n.message for n in app._notifications] == [
            "Something is running. Press Ctrl+Q again to quit."
        ]
        await pilot.press("ctrl+q")
        await until(pilot, lambda: app.return_code is not None)


async def test_ctrl_q_while_an_approval_waits_asks_first(make_app: Callable[..., FreeactApp]) -> None:
    app = make_app(script([Code("print(1)")], ["ok"]))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "one")
        await dialog(pilot, CodeAction)
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert app.return_code is None and isinstance(app.screen, ApprovalScreen)
        await pilot.press("ctrl+q")
        await until(pilot, lambda: app.return_code is not None)


async def test_ctrl_q_when_idle_quits_at_once(make_app: Callable[..., FreeactApp]) -> None:
    app = make_app(script(["hi"]))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "hello")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: not main(app).turn_running)
        await pilot.press("ctrl+q")
        await until(pilot, lambda: app.return_code is not None)


# -- the dialog at 80×24 ----------------------------------------------------------------------------


async def test_dialog_at_80x24_shows_every_key_and_the_waiting_count(
    make_app: Callable[..., FreeactApp],
) -> None:
    code = "\n".join(f"x{i} = {i}" for i in range(40)) + "\nprint('the last line')"
    app = make_app(script([Code(code)], ["ok"]))
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "long")
        screen = await dialog(pilot, CodeAction)
        await pilot.pause(0.2)
        lines = screen_lines(app)
        shown = "\n".join(lines)
        for key in (
            "y/Enter approve",
            "n reject",
            "Esc reject",
            "a always allow",
            "s allow",
            "d always deny",
        ):
            assert key in shown, key
        assert "1 approval waiting" in lines[-2]  # the status bar, under the dialog
        # Nothing of the log beside the dialog: it spans the terminal.
        assert screen.query_one("#approval-dialog").region.width == 80
        # A long action scrolls inside the dialog; its last line can be reached.
        action = screen.query_one("#approval-action")
        assert action.max_scroll_y > 0
        action.scroll_end(animate=False)
        await pilot.pause(0.1)
        assert "print('the last line')" in "\n".join(screen_lines(app))
        assert "d always deny" in "\n".join(screen_lines(app))
        # The block behind the dialog shows the code too, marked as waiting (an empty frame read as "nothing
        # to approve", #39); the dialog stays where it is decided.
        [block] = main(app).conversation.query(ActionBlock)
        body = block.query_one(".action-body")
        assert body.display and body.region.height > 0 and block.status == "waiting for approval"
        await pilot.press("y")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: not main(app).turn_running)
        assert body.region.height > 0
