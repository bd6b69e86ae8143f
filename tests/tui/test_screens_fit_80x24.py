"""Every screen and dialog of the app at 80×24 (issue #43): each one opened as the user opens it (a key, a
slash command, a model's action), or pushed with sample data where reaching it needs a history (undo,
rewind, diff, trust). For each, every widget shown ends inside the screen, and nothing that should wrap
scrolls sideways. One row per screen; the real app on the module's kernel."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from textual.errors import NoWidget
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget

from freeact_tui.checkpoints.plans import UserTurn
from freeact_tui.project.config import Config
from freeact_tui.project.review import ProjectReview
from freeact_tui.project.trust import FileChange
from freeact_tui.store.sessions import SessionStore
from freeact_tui.toolcalls import EDIT_TEXT_TOOL
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.approval import ApprovalScreen
from freeact_tui.tui.screens.confirm import ConfirmScreen
from freeact_tui.tui.screens.diff import DiffScreen
from freeact_tui.tui.screens.file_picker import FilePicker
from freeact_tui.tui.screens.first_run import FirstRunScreen
from freeact_tui.tui.screens.help import HelpScreen
from freeact_tui.tui.screens.main import MainScreen
from freeact_tui.tui.screens.pager import PagerScreen
from freeact_tui.tui.screens.permissions import PermissionsScreen
from freeact_tui.tui.screens.picker import PickerScreen
from freeact_tui.tui.screens.rewind import RewindScreen
from freeact_tui.tui.screens.trust import TrustScreen
from freeact_tui.tui.screens.undo import UndoScreen
from tests import helpers
from tests.helpers import ready, send, until
from tests.scripted import Call, Code, Script, script
from tests.tui.test_tui_checkpoints import SAMPLE_DIFF, sample_plan

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]

SIZE = (80, 24)
executor = helpers.kernel

LONG_CODE = (
    "import json\n\n# count the words of every file in the notes folder, then write a summary next to it\n"
    "with open('notes.txt') as fh:\n    words = fh.read().split()\n"
    "print(json.dumps({'words': len(words), 'unique': len(set(words)), 'longest': max(words, key=len)}))"
)
LONG_SHELL = (
    "!mkdir -p build/output/reports && touch build/output/reports/summary-of-every-note.txt && ls -la build"
)
EDIT = {
    "path": "notes.md",
    "old_text": "- milk\n",
    "new_text": "- oat milk\n- coffee and a long line " * 3 + "\n",
}
REVIEW = ProjectReview(
    Path("/home/me/src/a-clone-with-a-rather-long-name/of-a-project"),
    changed=True,
    files=[".freeact-tui.toml — settings", "AGENTS.md — instructions added to the model's system prompt"],
    servers=["helper: sh -c 'curl -s https://example.com/a/rather/long/setup/script/path | sh'"],
    rules=["allow code: *"],
    changes=[
        FileChange(
            ".freeact-tui.toml", "changed", "--- a\n+++ b\n@@ -1 +1 @@\n-x = 1\n+x = 2" + " # long" * 20
        )
    ],
)


Open = Callable[[Pilot[None], FreeactApp], Awaitable[None]]


@dataclass(frozen=True)
class Row:
    """One screen: how to reach it, the model's script it needs, and the screen it shows."""

    name: str
    open: Open
    screen: type[Screen[object]]
    answers: tuple[list[object], ...] = (["ok"],)
    """The model's answers, one list of parts per request."""


def keys(*pressed: str) -> Open:
    async def run(pilot: Pilot[None], app: FreeactApp) -> None:
        await pilot.press(*pressed)

    return run


def command(text: str) -> Open:
    async def run(pilot: Pilot[None], app: FreeactApp) -> None:
        await send(pilot, text)

    return run


def prompt(text: str) -> Open:
    """A prompt whose answer is an action: its approval dialog."""
    return command(text)


def push(make: Callable[[FreeactApp], Screen[object]]) -> Open:
    async def run(pilot: Pilot[None], app: FreeactApp) -> None:
        app.push_screen(make(app))

    return run


async def at_picker(pilot: Pilot[None], app: FreeactApp, typed: str = "") -> None:
    prompt_input = app.main_screen.prompt
    prompt_input.focus()
    await pilot.press("@", *typed)


async def skills_picker(pilot: Pilot[None], app: FreeactApp) -> None:
    await at_picker(pilot, app, "/")


async def pager(pilot: Pilot[None], app: FreeactApp) -> None:
    await send(pilot, "Print the rows")
    await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
    await pilot.press("y")
    await until(pilot, lambda: app.agent_ready and not app.main_screen.turn_running, limit=30)
    await pilot.press("alt+o")


async def main_screen(pilot: Pilot[None], app: FreeactApp) -> None:
    await send(pilot, "Count the words")
    await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
    await pilot.press("y")
    await until(pilot, lambda: app.agent_ready and not app.main_screen.turn_running, limit=30)


def rewind(app: FreeactApp) -> Screen[object]:
    turns = [
        UserTurn(0, "Plot a sine wave and save it as sine.png", 2),
        UserTurn(4, "Now make the line red\nand add a title", 1),
        UserTurn(9, "Explain what you did " + "in detail " * 10, 0),
    ]
    return RewindScreen(turns)


async def no_plan(scope: object) -> object:
    return sample_plan()


ROWS = [
    Row(
        "main screen after a turn",
        main_screen,
        MainScreen,
        (["Counting.", Code(LONG_CODE)], ["Done: **42** words."]),
    ),
    Row("help", keys("f1"), HelpScreen),
    Row("rules", command("/permissions"), PermissionsScreen),
    Row("approval: code", prompt("Count the words"), ApprovalScreen, (["I will count.", Code(LONG_CODE)],)),
    Row("approval: shell", prompt("Make the dirs"), ApprovalScreen, ([Code(LONG_SHELL)],)),
    Row(
        "approval: file edit",
        prompt("Add coffee"),
        ApprovalScreen,
        (["Editing.", Call(EDIT_TEXT_TOOL, EDIT, "c1")],),
    ),
    Row("trust", push(lambda app: TrustScreen(REVIEW)), TrustScreen),
    Row("model picker", command("/model"), PickerScreen),
    Row("theme picker", command("/theme"), PickerScreen),
    Row("session picker", command("/sessions"), PickerScreen),
    Row("file picker", at_picker, FilePicker),
    Row("skills picker", skills_picker, FilePicker),
    Row("undo", push(lambda app: UndoScreen(sample_plan(), no_plan)), UndoScreen),  # type: ignore[arg-type]
    Row("rewind", push(rewind), RewindScreen),
    Row(
        "diff",
        push(lambda app: DiffScreen("Changes of code action: open('src/app.py', 'w')…", SAMPLE_DIFF)),
        DiffScreen,
    ),
    Row(
        "pager",
        pager,
        PagerScreen,
        ([Code("for i in range(400): print(f'row {i} ' + 'x' * 90)")], ["Printed."]),
    ),
    Row(
        "confirm",
        push(lambda app: ConfirmScreen("Delete session 3f2a9c?", "Its history is removed for good.")),
        ConfirmScreen,
    ),
    Row("first run", push(lambda app: FirstRunScreen("No model is configured.")), FirstRunScreen),
]

SIDEWAYS_BY_DESIGN = ("TextArea#pager-text",)
"""Widgets that scroll sideways on purpose: the pager shows output line for line, as ``less -S`` does
(its search and line numbers count the lines the program printed)."""


def _name(widget: Widget) -> str:
    return f"{type(widget).__name__}#{widget.id}" if widget.id else type(widget).__name__


def _inside_a_vertical_scroll(widget: Widget, screen: Screen[object]) -> bool:
    node = widget.parent
    while isinstance(node, Widget) and node is not screen:
        if node.allow_vertical_scroll:
            return True
        node = node.parent
    return screen.allow_vertical_scroll


def misfits(screen: Screen[object]) -> list[str]:
    """What of ``screen`` does not fit it: widgets ending outside it, sideways scrollbars on text."""
    width, height = screen.size
    found = []
    for widget in screen.walk_children(with_self=False):
        if not widget.display or not widget.visible:
            continue
        try:
            region = screen.find_widget(widget).region
        except NoWidget:  # not drawn: scrolled out of sight, or inside a folded part
            continue
        if region.right > width:
            found.append(f"{_name(widget)} ends at column {region.right} (> {width})")
        if region.bottom > height and not _inside_a_vertical_scroll(widget, screen):
            found.append(f"{_name(widget)} ends at row {region.bottom} (> {height})")
        if (
            widget.allow_horizontal_scroll
            and widget.max_scroll_x > 0
            and _name(widget) not in SIDEWAYS_BY_DESIGN
        ):
            found.append(f"{_name(widget)} scrolls sideways by {widget.max_scroll_x} columns")
    return found


def make(executor: object, tmp_path: Path, answers: tuple[list[object], ...]) -> FreeactApp:
    work = tmp_path / "work"
    (work / ".freeact").mkdir(parents=True, exist_ok=True)  # a freeact project: its bundled skills
    (work / "notes.md").write_text("# Shopping\n\n- bread\n- milk\n- eggs\n")
    (work / "src" / "a-folder-with-a-long-name").mkdir(parents=True, exist_ok=True)
    (work / "src" / "a-folder-with-a-long-name" / ("a-file-with-a-very-long-name-" * 3 + ".py")).write_text(
        "x\n"
    )
    store = SessionStore(tmp_path / "sessions")  # the session picker has something to list
    for prompt_text in ("Plot the CSV", "Summarise the notes in every folder and " * 4):
        store.new_session().append(helpers.conversation(prompt_text))
    s: Script = script(*answers)  # type: ignore[arg-type]
    config = Config(sessions_dir=tmp_path / "sessions", working_dir=work, subagent_pool_size=0)
    return FreeactApp(config, model=s.model(), executor=executor)  # type: ignore[arg-type]


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
async def test_every_screen_fits_80x24(row: Row, executor: object, tmp_path: Path) -> None:
    app = make(executor, tmp_path, row.answers)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.animation_level = "none"
        await row.open(pilot, app)
        await until(pilot, lambda: isinstance(app.screen, row.screen), limit=30)
        await pilot.pause(0.3)  # laid out, its contents loaded
        # On a loaded machine the layout can settle a few frames later: a screen fits when it comes to
        # rest fitting, within the limit; a screen that never fits still fails, with what does not fit.
        with contextlib.suppress(AssertionError):
            await until(pilot, lambda: not misfits(app.screen), limit=10)
        found = misfits(app.screen)
        assert not found, "\n".join(found)
        if row.screen is not MainScreen:
            behind = misfits(app.main_screen)
            assert not behind, "behind it: " + "\n".join(behind)
