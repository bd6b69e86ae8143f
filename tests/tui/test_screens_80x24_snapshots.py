"""80×24 pictures of the screens that had none at that size (issue #43): the shell and file-edit approval
dialogs, the ``@`` file picker (files and skills) and the model picker. Reviewed as pictures; what every
screen must satisfy at 80×24 is checked in ``test_screens_fit_80x24``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from freeact_tui.toolcalls import EDIT_TEXT_TOOL
from freeact_tui.tui.screens.approval import ApprovalScreen
from freeact_tui.tui.screens.picker import PickerScreen
from tests.helpers import SnapCompare, at_picker, before, log_settled, main, send
from tests.helpers import own_kernel_until as until
from tests.helpers import snapshot_app as make_app
from tests.scripted import Call, Code, script

pytestmark = [pytest.mark.kernel, pytest.mark.usefixtures("home_is_tmp")]  # ~/work in the welcome line

SIZE = (80, 24)
SHELL = "!mkdir -p build/output/reports && touch build/output/reports/summary-of-every-note.txt"
EDIT = {"path": "notes.md", "old_text": "- milk\n", "new_text": "- oat milk\n- coffee\n"}


def files(tmp_path: Path) -> None:
    work = tmp_path / "work"
    for rel in ("notes.md", "src/app.py", "src/widgets/conversation.py", "tests/test_conversation.py"):
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text("# Shopping\n\n- bread\n- milk\n- eggs\n")
    (work / ".freeact").mkdir()  # a freeact project: the bundled skills go to .freeact/skills


async def asked(pilot: Pilot[Any]) -> None:
    await until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))
    await log_settled(pilot)


def test_shell_approval_at_80x24(snap_compare: SnapCompare, tmp_path: Path) -> None:
    s = script(["I will make the dirs.", Code(SHELL)])

    async def turn(pilot: Pilot[Any]) -> None:
        await send(pilot, "Prepare the report dirs", wait_ready=False)
        await asked(pilot)

    assert snap_compare(make_app(s, tmp_path), terminal_size=SIZE, run_before=before(turn))


def test_file_edit_approval_at_80x24(snap_compare: SnapCompare, tmp_path: Path) -> None:
    files(tmp_path)
    s = script(["I'll update the list.", Call(EDIT_TEXT_TOOL, EDIT, "c1")])

    async def turn(pilot: Pilot[Any]) -> None:
        await send(pilot, "Add coffee to my list", wait_ready=False)
        await asked(pilot)

    assert snap_compare(make_app(s, tmp_path), terminal_size=SIZE, run_before=before(turn))


@pytest.mark.parametrize("typed", ["conv", "/"], ids=["files", "skills"])
def test_at_picker_at_80x24(snap_compare: SnapCompare, tmp_path: Path, typed: str) -> None:
    files(tmp_path)
    assert snap_compare(make_app(script(["unused"]), tmp_path), terminal_size=SIZE, run_before=before(at_picker(typed)))


def test_model_picker_at_80x24(snap_compare: SnapCompare, tmp_path: Path) -> None:
    async def pick(pilot: Pilot[Any]) -> None:
        await send(pilot, "/model", wait_ready=False)
        await until(pilot, lambda: isinstance(pilot.app.screen, PickerScreen))

    assert snap_compare(make_app(script(["unused"]), tmp_path), terminal_size=SIZE, run_before=before(pick))


def test_demo_tour_at_80x24(snap_compare: SnapCompare, tmp_path: Path) -> None:
    """The end of the demo's ``hi`` tour: its code blocks read whole at 80 columns, a line a row."""
    from freeact_tui.agent.demo_model import DEMO_MODEL

    async def hi(pilot: Pilot[Any]) -> None:
        await send(pilot, "hi", wait_ready=False)
        await log_settled(pilot)
        await until(pilot, lambda: not main(pilot.app).turn_running)

    app = make_app(DEMO_MODEL, tmp_path)  # type: ignore[arg-type]  (a model name, as --model demo gives)
    assert snap_compare(app, terminal_size=SIZE, run_before=before(hi))
