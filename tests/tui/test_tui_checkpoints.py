"""/undo, /rewind and /diff in the app, driven by Pilot with a real agent, a real kernel and real files."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Static

from freeact_tui.checkpoints.checkpointing import ActionRecord, UndoPlan, UndoScope, UserTurn
from freeact_tui.checkpoints.limits import SkippedFile
from freeact_tui.checkpoints.records import FileChange
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.project.config import Config
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.confirm import ConfirmScreen
from freeact_tui.tui.screens.diff import DiffScreen
from freeact_tui.tui.screens.rewind import RewindScreen
from freeact_tui.tui.screens.undo import UndoScreen
from freeact_tui.tui.widgets.blocks import ActionBlock, NoticeBlock, UserMessageBlock
from freeact_tui.tui.widgets.prompt import PromptInput
from tests import helpers
from tests.helpers import SnapCompare
from tests.scripted import Code, script

pytestmark = pytest.mark.kernel
async_test = pytest.mark.asyncio(loop_scope="module")

SIZE = (110, 40)

executor = helpers.kernel
# Checkpoints and undo run git beside the kernel: a longer wait than the default.
until = partial(helpers.until, limit=20.0)


def make_app(executor: KernelExecutor, work: Path, tmp_path: Path, *steps: Any, **config: Any) -> FreeactApp:
    config = {"skip_permissions": True, "subagent_pool_size": 0, **config}
    return helpers.make_app(script(*steps), tmp_path / "sessions", work, config=config, executor=executor)


async def send(pilot: Pilot[Any], text: str) -> None:
    app = pilot.app
    assert isinstance(app, FreeactApp)
    await until(pilot, lambda: app.agent_ready)
    await until(pilot, lambda: not app.main_screen.turn_running)
    prompt = app.main_screen.query_one(PromptInput)
    prompt.load_text(text)
    prompt.focus()
    await pilot.press("enter")
    await pilot.pause(0.05)
    await until(pilot, lambda: not app.main_screen.turn_running)


def notices(app: FreeactApp) -> list[str]:
    return [str(b.text) for b in app.main_screen.conversation.query(NoticeBlock)]


def write(path: Path, text: str, call_id: str) -> Code:
    return Code(f"open({str(path)!r}, 'w').write({text!r})", call_id)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    (root / "a.txt").write_text("original\n")
    return root


@async_test
async def test_undo_shows_the_files_and_diff_and_restores_on_confirm(
    executor: KernelExecutor, tmp_path: Path, work: Path
) -> None:
    app = make_app(executor, work, tmp_path, [write(work / "a.txt", "changed\n", "c1")], ["ok"])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "change a.txt")
        assert (work / "a.txt").read_text() == "changed\n"
        await send(pilot, "/undo")
        await until(pilot, lambda: isinstance(app.screen, UndoScreen))
        screen = app.screen
        summary = str(screen.query_one("#undo-summary", Static).render())
        assert "a.txt" in summary and "old content back" in summary
        assert "+changed" in str(screen.query_one("#undo-diff-text", Static).render())
        await pilot.press("n")  # cancel: nothing changes
        await until(pilot, lambda: not isinstance(app.screen, UndoScreen))
        assert (work / "a.txt").read_text() == "changed\n"
        await send(pilot, "/undo")
        await until(pilot, lambda: isinstance(app.screen, UndoScreen))
        await pilot.press("t")  # the whole turn: the same single action here
        await until(pilot, lambda: "last turn" in str(app.screen.query_one("#undo-title", Static).render()))
        await pilot.press("y")
        await until(pilot, lambda: any("Undid" in n for n in notices(app)))
    assert (work / "a.txt").read_text() == "original\n"


@async_test
async def test_undo_in_remote_mode_says_it_cannot(
    executor: KernelExecutor, tmp_path: Path, work: Path
) -> None:
    cfg = Config(
        sessions_dir=tmp_path / "sessions",
        working_dir=work,
        execution="remote",
        remote_url="http://127.0.0.1:9",
    )
    app = FreeactApp(cfg, model=script(["x"]).model(), executor=executor)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/undo")
        await until(pilot, lambda: any("remote mode" in n for n in notices(app)))


@async_test
async def test_rewind_picker_cuts_the_conversation_and_restores_files(
    executor: KernelExecutor, tmp_path: Path, work: Path
) -> None:
    f = work / "a.txt"
    app = make_app(
        executor,
        work,
        tmp_path,
        [write(f, "one\n", "c1")],
        ["first done"],
        [write(f, "two\n", "c2")],
        ["second done"],
    )
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "first")
        await send(pilot, "second")
        assert f.read_text() == "two\n"
        await send(pilot, "/rewind")
        await until(pilot, lambda: isinstance(app.screen, RewindScreen))
        await pilot.press("b")  # the newest message is highlighted: rewind both to before "second"
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: any("rewound" in n for n in notices(app)))
        assert f.read_text() == "one\n"
        shown = [str(b.text) for b in app.main_screen.conversation.query(UserMessageBlock)]
        assert shown == ["first"]
        assert app.main_screen.query_one(PromptInput).text == "second"
        assert app.agent is not None and app.agent.checkpointing.notes.pending is not None
        session_id = app.agent.session_id
        archive = tmp_path / "sessions" / session_id / "rewound" / "main.1.jsonl"
        marked = [n for n in notices(app) if n.startswith("The conversation was rewound here")]
        assert marked == [
            f"The conversation was rewound here: 1 turn (4 messages) withdrawn; kept in {archive}."
        ]
        assert "second done" in archive.read_text()

    # Resumed: the cut history, the rewind marked where it happened, nothing of the withdrawn turn.
    resumed = FreeactApp(
        Config(
            sessions_dir=tmp_path / "sessions", working_dir=work, skip_permissions=True, subagent_pool_size=0
        ),
        model=script(["x"]).model(),
        executor=executor,
        session_id=session_id,
    )
    async with resumed.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: resumed.agent_ready)
        await until(pilot, lambda: bool(resumed.main_screen.conversation.query(UserMessageBlock)))
        log = resumed.main_screen.conversation
        shown = [str(b.text) for b in log.query(UserMessageBlock)]
        assert shown == ["first"]
        blocks = list(log.query(NoticeBlock))
        (mark,) = [b for b in blocks if b.border_title == "Rewound"]
        assert str(mark.text) == marked[0]
        assert not [b for b in log.query(Static) if "second done" in str(b.render())]
        assert list(log.children).index(mark) > list(log.children).index(log.query(UserMessageBlock).first())


@async_test
async def test_files_a_checkpoint_skips_are_named_at_action_time_and_in_the_rewind_dialog(
    executor: KernelExecutor, tmp_path: Path, work: Path
) -> None:
    big = work / "big.bin"
    make_big = Code(f"open({str(big)!r}, 'wb').write(bytes(range(256)) * 40)", "c1")  # 10 KiB, binary
    app = make_app(
        executor,
        work,
        tmp_path,
        [make_big],
        ["made"],
        [write(work / "a.txt", "two\n", "c2")],
        [write(work / "a.txt", "three\n", "c3")],
        ["changed"],
        checkpoint_max_binary_bytes=4096,
    )
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "make a big binary file")
        assert not [n for n in notices(app) if "Not in the checkpoint" in n]  # it did not exist yet
        await send(pilot, "change a.txt twice")
        told = [n for n in notices(app) if "Not in the checkpoint" in n]
        assert len(told) == 1  # named once, at the first checkpoint that skipped it
        assert "big.bin — a binary file larger than the limit of 4.0 KiB (10.0 KiB)" in told[0]
        assert "checkpoint_max_binary_bytes" in told[0]
        await send(pilot, "/rewind")
        await until(pilot, lambda: isinstance(app.screen, RewindScreen))
        await pilot.press("f")  # the newest message: files only
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        question = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert "Left as they are (checkpoints skip them): big.bin (a binary file larger" in question
        assert "a.txt" in question
        await pilot.press("y")
        await until(pilot, lambda: (work / "a.txt").read_text() == "original\n")
        assert big.exists()  # left as it is


@async_test
async def test_diff_key_on_a_focused_action_block_and_the_diff_command(
    executor: KernelExecutor, tmp_path: Path, work: Path
) -> None:
    app = make_app(
        executor,
        work,
        tmp_path,
        [write(work / "a.txt", "first\n", "c1")],
        [write(work / "b.txt", "b\n", "c2")],
        ["ok"],
    )
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "two writes")
        first = app.main_screen.conversation.query(ActionBlock).first()
        first.focus()
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, DiffScreen))
        text = str(app.screen.query_one("#diff-text", Static).render())
        assert "+first" in text and "-original" in text and "b.txt" not in text
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, DiffScreen))
        await send(pilot, "/diff")  # the last action
        await until(pilot, lambda: isinstance(app.screen, DiffScreen))
        text = str(app.screen.query_one("#diff-text", Static).render())
        assert "b.txt" in text and "+b" in text and "a.txt" not in text
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, DiffScreen))
        await send(pilot, "/diff 2")  # the action before
        await until(pilot, lambda: isinstance(app.screen, DiffScreen))
        text = str(app.screen.query_one("#diff-text", Static).render())
        assert "+first" in text and "b.txt" not in text


SAMPLE_DIFF = """diff --git a/src/app.py b/src/app.py
index 3b18e51..a9c3f2d 100644
--- a/src/app.py
+++ b/src/app.py
@@ -1,4 +1,5 @@
 import sys
-print("hello")
+print("hello, world")
+sys.exit(0)
 # end
diff --git a/data.bin b/data.bin
new file mode 100644
index 0000000..e69de29
Binary files /dev/null and b/data.bin differ
"""


class DiffApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("log behind the dialog")

    def on_mount(self) -> None:
        self.push_screen(DiffScreen("Changes of code action: open('src/app.py', 'w')…", SAMPLE_DIFF))


def test_diff_view_snapshot(snap_compare: SnapCompare) -> None:
    assert snap_compare(DiffApp(), terminal_size=(90, 24))


def sample_plan() -> UndoPlan:
    record = ActionRecord("c0ffee", "call-1", "main", 0, "code", "open('src/app.py', 'w')", ("/etc/motd",))
    return UndoPlan(
        "action",
        (record,),
        "c0ffee",
        (
            FileChange("src/app.py", "modified"),
            FileChange("data.bin", "added"),
            FileChange("old.txt", "deleted"),
        ),
        SAMPLE_DIFF,
        ("/etc/motd",),
        (SkippedFile("big.iso", "larger than the limit of 5.0 MiB (700.0 MiB)"),),
    )


class UndoApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("log behind the dialog")

    def on_mount(self) -> None:
        async def load(scope: UndoScope) -> UndoPlan:
            return sample_plan()

        self.push_screen(UndoScreen(sample_plan(), load))


class RewindApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("log behind the dialog")

    def on_mount(self) -> None:
        turns = [
            UserTurn(0, "Plot a sine wave and save it as sine.png", 2),
            UserTurn(4, "Now make the line red\nand add a title", 1),
            UserTurn(9, "Explain what you did " + "in detail " * 10, 0),
        ]
        self.push_screen(RewindScreen(turns))


def test_undo_dialog_snapshot(snap_compare: SnapCompare) -> None:
    assert snap_compare(UndoApp(), terminal_size=(100, 40))


def test_rewind_picker_snapshot(snap_compare: SnapCompare) -> None:
    assert snap_compare(RewindApp(), terminal_size=(100, 20))


@pytest.mark.parametrize("app", [UndoApp, RewindApp, DiffApp], ids=["undo", "rewind", "diff"])
def test_checkpoint_dialogs_at_80x24(snap_compare: SnapCompare, app: type[App[None]]) -> None:
    """Each dialog's scrolling part takes what the rest leaves: its keys stay in sight (issue #43)."""
    assert snap_compare(app(), terminal_size=(80, 24))
