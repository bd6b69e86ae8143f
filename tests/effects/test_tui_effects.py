"""Approvals by what code does, in the app (#42): `s` saves the effect class, Ctrl+T cycles the mode,
Esc discards a typed pattern (real kernel, scripted model)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Input

from freeact_tui.effects.modes import ApprovalMode
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.toolcalls import RESET_TOOL
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.approval import ApprovalScreen
from tests import helpers
from tests.helpers import actions, dialog, main, send
from tests.scripted import Call, Code, Script, script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]
executor = helpers.kernel
SIZE = (120, 40)


@pytest.fixture
def work(executor: KernelExecutor) -> Path:
    """The folder the module's kernel runs in: relative paths land there (each test names its own files)."""
    return Path(executor.working_dir)


@pytest.fixture
def make_app(executor: KernelExecutor, work: Path, tmp_path: Path) -> Callable[..., FreeactApp]:
    """An app on the module's kernel whose working folder is where the kernel runs (``work``)."""

    def make(s: Script) -> FreeactApp:
        return helpers.make_app(
            s, tmp_path / "sessions", work, config={"subagent_pool_size": 0}, executor=executor
        )

    return make


async def test_s_on_in_folder_code_covers_a_second_in_folder_cell_and_not_an_outside_write(
    make_app: Callable[..., FreeactApp], work: Path
) -> None:
    outside = work.parent / f"{work.name}-outside.txt"
    s = script(
        [Code("with open('one.txt', 'w') as f:\n    f.write('1')", call_id="c1")],
        ["first done"],
        [Code("from pathlib import Path\nPath('two.txt').write_text(str(len('abc')))", call_id="c2")],
        ["second done"],
        [Code(f"open('../{outside.name}', 'w').write('x')", call_id="c3")],
        ["third done"],
    )
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "write one")
        screen = await dialog(pilot)
        assert "It writes inside this folder: one.txt" in str(screen.query_one("#approval-effects").render())
        await pilot.press("s")
        pattern = screen.query_one("#approval-pattern", Input)
        assert pattern.value == "effects:in-folder"
        assert "only reads and writes inside this folder" in str(
            screen.query_one("#approval-breadth").render()
        )
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert (work / "one.txt").read_text() == "1"

        await send(pilot, "write two")  # other code, same class: runs unasked
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert (work / "two.txt").read_text() == "3"
        assert actions(app)[-1].status == "auto-approved by rule"

        await send(pilot, "write outside")  # wider: asked, and it says why
        outside_dialog = await dialog(pilot)
        assert "touches paths outside this folder" in str(
            outside_dialog.query_one("#approval-effects").render()
        )
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        assert not outside.exists()


async def test_ctrl_t_cycles_the_mode_and_the_mode_decides(
    make_app: Callable[..., FreeactApp], work: Path
) -> None:
    s = script(
        [Code("open('made.txt', 'w').write('ok')", call_id="c1")],
        ["made"],
        [Code("open('planned.txt', 'w').write('no')", call_id="c2")],
        ["planned"],
    )
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await helpers.until(pilot, lambda: app.agent is not None)
        assert app.agent is not None
        label = main(app).status_bar.query_one("#status-approval-mode")
        assert label.has_class("-hidden")  # ask, the default, is not pointed out
        await pilot.press("ctrl+t")
        assert app.agent.permissions.mode == ApprovalMode.IN_FOLDER
        assert "in-folder" in str(label.render()) and not label.has_class("-hidden")

        await send(pilot, "make it")  # in-folder work runs unasked
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert (work / "made.txt").read_text() == "ok"
        assert not isinstance(app.screen, ApprovalScreen)
        assert actions(app)[-1].status == "auto-approved by the in-folder mode"

        await pilot.press("ctrl+t")
        assert app.agent.permissions.mode == ApprovalMode.PLAN
        await send(pilot, "plan it")  # nothing runs while planning
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not (work / "planned.txt").exists()
        assert actions(app)[-1].status == "rejected by the plan mode"

        await pilot.press("ctrl+t")  # no sandbox here: back to ask
        assert app.agent.permissions.mode == ApprovalMode.ASK
        assert label.has_class("-hidden")

        # Shift+Tab keeps its place (the log focused: back to the prompt) and leaves the mode alone.
        await pilot.press("ctrl+l", "shift+tab")
        assert app.focused is main(app).prompt
        assert app.agent.permissions.mode == ApprovalMode.ASK


async def test_esc_discards_a_typed_pattern(make_app: Callable[..., FreeactApp]) -> None:
    s = script([Code("import os\nos.system('true')")], ["done"])
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "run it")
        screen = await dialog(pilot)
        await pilot.press("a")
        pattern = screen.query_one("#approval-pattern", Input)
        proposed = pattern.value
        assert proposed.startswith("cell:")  # code that runs programs: only this cell is proposed
        pattern.value = ""
        await pilot.press("*", "escape")
        await pilot.press("a")
        assert pattern.value == proposed  # the `*` is gone, not one Enter from allowing everything
        await pilot.press("escape", "escape")
        await app.workers.wait_for_complete()


async def test_after_a_cell_the_reading_cannot_follow_the_dialog_says_why_an_in_folder_cell_asks(
    make_app: Callable[..., FreeactApp], work: Path
) -> None:
    """Round 3: ``s`` saved in-folder work; a hand-approved ``exec`` poisons the kernel; the next in-folder
    cell asks, and the dialog says that earlier code did what the reading cannot follow, and how to
    trust readings again."""
    s = script(
        [Code("open('tui-one.txt', 'w').write('1')", call_id="c1")],
        ["one"],
        [Code("exec('zz_tui = 1')", call_id="c2")],
        ["poisoned"],
        [Code("open('tui-two.txt', 'w').write('2')", call_id="c3")],
        [Call(RESET_TOOL, {}, call_id="r")],
        ["reset"],
    )
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "one")
        await dialog(pilot)
        await pilot.press("s", "enter")  # allow in-folder work for the session
        await app.workers.wait_for_complete()
        await send(pilot, "poison")
        poison = await dialog(pilot)
        assert "cannot tell what it does: uses exec" in str(poison.query_one("#approval-effects").render())
        readings = main(app).status_bar.query_one("#status-readings")
        assert readings.has_class("-hidden")  # nothing to point out yet
        await pilot.press("y")  # approved by hand
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not readings.has_class("-hidden") and "reset the kernel" in str(readings.render())
        assert "uses exec" in str(readings.tooltip)
        await send(pilot, "two")
        later = await dialog(pilot)  # in-folder work, yet asked
        said = str(later.query_one("#approval-effects").render())
        assert "earlier code in this kernel did something the reading cannot follow" in said
        assert "reset the kernel to trust readings again" in said and "tui-two.txt" in said
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        assert not (work / "tui-two.txt").exists()
        await send(pilot, "reset the kernel")
        await dialog(pilot)
        await pilot.press("y")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert readings.has_class("-hidden")  # a fresh kernel: readings are trusted again
