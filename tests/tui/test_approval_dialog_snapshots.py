"""The approval dialog as pictures: 80×24 and 120×40, a short and a long action, the reject line open,
code with escape sequences shown as symbols (issues #28, #29), blank lines folded and invisible
characters shown (issue #39), the names a writer may land on grouped by suffix (issue #42)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.approval import ApprovalScreen
from freeact_tui.tui.widgets.prompt import PromptInput
from tests import helpers
from tests.helpers import send
from tests.helpers import snapshot_app as make_app
from tests.scripted import Code, script

# Snapshot apps start their own kernel: 30 s in 0.05 s steps unless a wait says otherwise.
until = partial(helpers.until, limit=30.0, step=0.05)

pytestmark = pytest.mark.kernel
SnapCompare = Callable[..., bool]

CODE = (
    "import json\n\n# count words in a file\nwith open('notes.txt') as fh:\n"
    "    words = fh.read().split()\nprint(json.dumps({'words': len(words)}))"
)
LONG = "\n".join(f"total_{i} = {i} * {i}  # step {i}" for i in range(40)) + "\nprint(total_39)"
SPOOF = 'import posix; posix.system("touch X")  # \x1b[2K\x1b[1G │ print("hello, world")'
# Issue #39: a decoy line, 80 blank lines, then the call; invisible and bidi characters in names and text.
BLANKS = 'print("hello")\n' + "\n" * 80 + 'import os; os.system("touch X")'
INVISIBLE = (
    "\u3164 = __import__('os')  # a Hangul filler as a name\n"
    "\u3164.system('echo hi\u200b\u2060\ufeff')  # zero-width\n"
    "access = 'user' # \u202e \u2066admin\u2069 \u2066\n"
    "print('ok')" + " " * 120 + "; \u3164.system('touch X')\n"
)

# Issue #42: ``savefig('fig')`` may write ``fig`` or ``fig.<any of 16 formats>``: one entry, not "and 13 more".
SAVEFIG = "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.savefig('fig')"


@pytest.fixture(autouse=True)
def home_is_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The welcome line shows the working dir as ``~/work`` (a temporary path would differ each run)."""
    monkeypatch.setenv("HOME", str(tmp_path))


def before(turn: Callable[[Pilot[Any]], Awaitable[None]]) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, FreeactApp)
        app.animation_level = "none"
        # The first kernel of a test process can take long on a loaded machine.
        await until(pilot, lambda: app.agent is not None and app.agent.kernel_state == "ready", limit=120)
        await until(pilot, lambda: "ready" in str(app.main_screen.query_one("#status-kernel").render()))
        app.main_screen.query_one(PromptInput).cursor_blink = False
        await turn(pilot)
        await pilot.pause(0.2)

    return run


def asked(*keys: str, answers: int = 1) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def turn(pilot: Pilot[Any]) -> None:
        await send(pilot, "Count the words in notes.txt")
        await until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))
        screen = pilot.app.screen
        assert isinstance(screen, ApprovalScreen)
        await until(pilot, lambda: screen.armed)
        await helpers.log_settled(pilot, answers=answers)  # the log behind the dialog is in the picture
        if keys:
            await pilot.press(*keys)
        for field in screen.query(Input):  # a blinking cursor would make the picture depend on timing
            field.cursor_blink = False
        await pilot.pause(0.2)

    return turn


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_dialog_code_action(snap_compare: SnapCompare, tmp_path: Path, size: tuple[int, int]) -> None:
    s = script(["I will count the words.", Code(CODE)])
    assert snap_compare(make_app(s, tmp_path), terminal_size=size, run_before=before(asked()))


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_dialog_long_action(snap_compare: SnapCompare, tmp_path: Path, size: tuple[int, int]) -> None:
    s = script(["Summing squares.", Code(LONG)])
    assert snap_compare(make_app(s, tmp_path), terminal_size=size, run_before=before(asked()))


def test_dialog_reject_line_at_80x24(snap_compare: SnapCompare, tmp_path: Path) -> None:
    s = script(["I will count the words.", Code(CODE)])
    run = before(asked("n", *"use pathlib"))
    assert snap_compare(make_app(s, tmp_path), terminal_size=(80, 24), run_before=run)


def test_dialog_shows_hidden_command_at_80x24(snap_compare: SnapCompare, tmp_path: Path) -> None:
    s = script([Code(SPOOF)])
    assert snap_compare(make_app(s, tmp_path), terminal_size=(80, 24), run_before=before(asked(answers=0)))


def test_dialog_folds_80_blank_lines_at_80x24(snap_compare: SnapCompare, tmp_path: Path) -> None:
    s = script([Code(BLANKS)])
    assert snap_compare(make_app(s, tmp_path), terminal_size=(80, 24), run_before=before(asked(answers=0)))


def test_dialog_shows_invisible_characters_at_80x24(snap_compare: SnapCompare, tmp_path: Path) -> None:
    s = script([Code(INVISIBLE)])
    assert snap_compare(make_app(s, tmp_path), terminal_size=(80, 24), run_before=before(asked(answers=0)))


def test_dialog_groups_the_names_savefig_may_write_at_80x24(snap_compare: SnapCompare, tmp_path: Path) -> None:
    s = script([Code(SAVEFIG)])
    assert snap_compare(make_app(s, tmp_path), terminal_size=(80, 24), run_before=before(asked(answers=0)))
