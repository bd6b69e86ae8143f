"""Approvals in the app: the dialog, its keys, rules with edited patterns, queues, cancellation (real kernel)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.content import Content
from textual.widgets import Input, Static

from freeact_tui.project import paths
from freeact_tui.toolcalls import CodeAction, ShellAction
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.approval import ApprovalScreen
from freeact_tui.tui.widgets.blocks import NoticeBlock, ResponseBlock
from tests import helpers
from tests.helpers import actions, dialog, main, outputs, send, until
from tests.scripted import Call, Code, Script, script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]
executor = helpers.kernel
make_app = helpers.chat_app
SIZE = (120, 40)


async def test_approve_with_y_runs_code_and_shows_output(make_app: Callable[..., FreeactApp]) -> None:
    s = script([Code("print('hello from the kernel')")], ["Done."])
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "say hello")
        screen = await dialog(pilot)
        body = str(screen.query_one("#approval-body").render())
        assert "print('hello from the kernel')" in body
        assert actions(app)[0].status == "waiting for approval"
        assert main(app).status_bar.query_one("#status-approvals").has_class("-hidden") is False
        await pilot.press("y")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not isinstance(app.screen, ApprovalScreen)
        assert outputs(app) == ["hello from the kernel"]
        assert actions(app)[0].status == "approved"
        assert [b.text for b in main(app).conversation.query(ResponseBlock)] == ["Done."]
        assert main(app).status_bar.query_one("#status-approvals").has_class("-hidden")


async def test_the_log_shows_the_waiting_action_in_full_while_the_dialog_asks(
    make_app: Callable[..., FreeactApp],
) -> None:
    """An empty action box while the dialog waits read as "nothing to approve" (#39): the block in the log
    shows the code, highlighted and with invisible characters made visible by the one table, as soon as the
    action is complete and before it is decided, marked as waiting; the dialog stays where it is decided."""
    code = "import os\nname\u200b = 'x'\n" + "\n" * 30 + "os.system('echo hi')"
    s = script([Code(code)], ["Done."])
    app = make_app(s)
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "do it")
        await dialog(pilot)
        await pilot.pause()
        block = actions(app)[0]
        assert block.status == "waiting for approval" and block.has_class("-pending")
        body = block.query_one(".action-body", Static)
        assert body.display and body.styles.display == "block"
        assert body.region.height > 0 and body.outer_size.height >= 3
        shown = body.render()
        text = shown.plain if isinstance(shown, Content) else str(shown)
        assert "os.system('echo hi')" in text  # the call after the blank run is in the block too
        assert "\u27e8U+200B\u27e9" in text and "\u200b" not in text
        assert isinstance(app.screen, ApprovalScreen)  # the decision is still the dialog's
        await pilot.press("n", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert block.status == "rejected" and not block.has_class("-pending")
        assert body.display


async def test_reject_with_n_ends_turn_without_running(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    marker = tmp_path / "ran.txt"
    s = script([Code(f"open({str(marker)!r}, 'w').write('x')")], ["Understood."])
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "write a file")
        await dialog(pilot)
        await pilot.press("n", "enter")  # n opens the instruction line; Enter alone rejects
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert actions(app)[0].status == "rejected"
        assert actions(app)[0].has_class("-rejected")
        assert outputs(app) == []
        assert not marker.exists()
        assert app.agent is not None
        assert "rejected" in str(app.agent.history[-1].parts[-1].content)  # type: ignore[union-attr]
        assert len(s.requests) == 1  # the turn ended: the model was not asked again


async def test_session_rule_with_edited_pattern(make_app: Callable[..., FreeactApp], tmp_path: Path) -> None:
    s = script(
        [Code(f"!touch {tmp_path}/alpha.txt", call_id="c1")],
        ["first done"],
        [Code(f"!touch {tmp_path}/another.txt", call_id="c2")],
        ["second done"],
        [Code(f"!touch {tmp_path}/zulu.txt", call_id="c3")],
        ["third done"],
    )
    app = make_app(s)  # the working dir is tmp_path
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "touch alpha")
        shell_dialog = await dialog(pilot, ShellAction)  # a cell of only shell: its command alone is asked
        assert actions(app)[0].status == "shell commands asked one by one"
        assert isinstance(actions(app)[0].tool_call, CodeAction)
        assert isinstance(shell_dialog.request.tool_call, ShellAction)
        assert f"touch {tmp_path}/alpha.txt" in str(shell_dialog.query_one("#approval-body").render())
        await pilot.press("s")
        pattern = shell_dialog.query_one("#approval-pattern", Input)
        # touch may write any file: the proposal is the command itself, a wider rule is the user's edit
        assert pattern.value == f"touch {tmp_path}/alpha.txt" and pattern.has_focus
        pattern.value = f"touch {tmp_path}/a*"
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert (tmp_path / "alpha.txt").exists()
        assert actions(app)[-1].status == f"approved · session rule: touch {tmp_path}/a*"

        await send(pilot, "touch another")
        await app.workers.wait_for_complete()  # nothing asked at all
        await pilot.pause()
        assert (tmp_path / "another.txt").exists()
        assert actions(app)[-1].status == "auto-approved by rule"

        await send(pilot, "touch zulu")
        zulu = await dialog(pilot, ShellAction)  # outside the edited pattern: asked again
        assert f"touch {tmp_path}/zulu.txt" in str(zulu.query_one("#approval-body").render())
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        assert not (tmp_path / "zulu.txt").exists()


async def test_parallel_requests_queue_with_count(make_app: Callable[..., FreeactApp]) -> None:
    """Calls that run in different places (the kernel, a subagent's kernel) are asked side by side: the
    dialogs queue with a count. (Two code calls of one kernel are read and asked one after another.)"""
    s = Script(
        [
            [Code("print('one')", call_id="c1"), Call("subagent_task", {"prompt": "say two"}, call_id="t1")],
            ["two"],  # the subagent's answer
            ["both ran"],
        ]
    )
    app = make_app(s, {"action_protocol": "tools"})
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "two things")
        first = await dialog(pilot)
        await until(pilot, lambda: len(actions(app)) == 2)
        await pilot.pause()
        assert first.query_one("#approval-dialog").border_subtitle == "1 of 2"
        assert "2 approvals waiting" in str(main(app).status_bar.query_one("#status-approvals").render())
        await pilot.press("y")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen is not first)
        second = app.screen
        assert isinstance(second, ApprovalScreen)
        assert second.query_one("#approval-dialog").border_subtitle == "2 of 2"
        assert "say two" in str(second.query_one("#approval-body").render())
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "one" in outputs(app)


async def test_code_calls_of_one_reply_are_asked_one_after_another(make_app: Callable[..., FreeactApp]) -> None:
    """The second code call of a reply is read (and asked) only once the first has run (#42, F1): its reading
    sees the files the first left."""
    s = script([Code("print('one')", call_id="c1"), Code("print('two')", call_id="c2")], ["both ran"])
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "two things")
        first = await dialog(pilot)
        await pilot.pause()
        assert first.query_one("#approval-dialog").border_subtitle != "1 of 2"  # one question at a time
        await pilot.press("y")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen is not first)
        assert outputs(app) == ["one"]  # the first ran before the second was read
        second = app.screen
        assert "print('two')" in str(second.query_one("#approval-body").render())
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert sorted(outputs(app)) == ["one", "two"]


async def test_escape_cancels_mid_execution(make_app: Callable[..., FreeactApp]) -> None:
    s = script([Code("import time\nprint('started', flush=True)\ntime.sleep(30)")], ["after"])
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "sleep")
        await dialog(pilot)
        await pilot.press("y")
        await until(pilot, lambda: "started" in "".join(outputs(app)))
        started = asyncio.get_running_loop().time()
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert asyncio.get_running_loop().time() - started < 10
        notices = [b.text for b in main(app).conversation.query(NoticeBlock)]
        assert any("Cancelled (execution)" in n for n in notices)
        assert not main(app).turn_running


async def test_skip_permissions_runs_without_dialog(make_app: Callable[..., FreeactApp]) -> None:
    s = script([Code("print('\\x1b[32mgreen\\x1b[0m and plain')")], ["ok"])
    app = make_app(s, config_kw={"skip_permissions": True})
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "go")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not main(app).status_bar.query_one("#status-skip").has_class("-hidden")
        assert actions(app)[0].status == "auto-approved by --skip-permissions"
        assert outputs(app) == ["green and plain"]


async def test_always_rule_is_saved_and_pre_approves_the_next_match(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    s = script(
        [Code(f"!touch {tmp_path}/one.txt", call_id="c1")],
        ["first done"],
        [Code(f"!touch {tmp_path}/two.txt", call_id="c2")],
        ["second done"],
        [Code("print('never')", call_id="c3")],
        ["third done"],
    )
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "touch one")
        shell = await dialog(pilot, ShellAction)
        await pilot.press("a")
        assert "Always allow" in str(shell.query_one("#approval-scope").render())
        await pilot.press("escape")  # Esc while editing the pattern goes back to the choice
        assert not shell.editing_pattern and shell.is_current
        await pilot.press("a")
        pattern = shell.query_one("#approval-pattern", Input)
        assert pattern.value == f"touch {tmp_path}/one.txt"  # not a program known only to read: exact
        pattern.value = f"touch {tmp_path}/*"
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert (tmp_path / "one.txt").exists()
        assert actions(app)[-1].status == f"approved · always rule: touch {tmp_path}/*"
        saved = paths.permissions_file()
        assert saved.exists() and f"touch {tmp_path}/*" in saved.read_text()

        await send(pilot, "touch two")
        await app.workers.wait_for_complete()  # nothing asked: the rule allows the only shell part
        await pilot.pause()
        assert (tmp_path / "two.txt").exists()
        assert actions(app)[-1].status == "auto-approved by rule"

        await send(pilot, "print")
        await dialog(pilot)
        await pilot.press("escape")  # Esc on the main choice rejects
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert actions(app)[-1].status == "rejected"
        assert "never" not in "".join(outputs(app))


async def test_always_deny_saves_a_deny_rule_that_refuses_without_asking(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    s = script(
        [Code(f"!touch {tmp_path}/one.txt", call_id="c1")],  # rejected: the turn ends, no more requests
        [Code(f"!touch {tmp_path}/two.txt", call_id="c2")],
    )
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "touch one")
        shell = await dialog(pilot, ShellAction)
        await pilot.press("d")
        assert "Always deny" in str(shell.query_one("#approval-scope").render())
        assert "rejects" in str(shell.query_one("#approval-save").render())
        assert shell.query_one("#approval-pattern", Input).value == "touch *"
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not (tmp_path / "one.txt").exists()
        assert actions(app)[-1].status == "rejected · always deny rule: touch *"
        assert '"deny"' in paths.permissions_file().read_text()

        await send(pilot, "touch two")
        await app.workers.wait_for_complete()  # nothing asked: the rule refuses the only shell part
        await pilot.pause()
        assert not isinstance(app.screen, ApprovalScreen)
        assert not (tmp_path / "two.txt").exists()
        assert actions(app)[-1].status == "rejected by rule"
