"""No git the checkpoints run waits forever on a file the app did not choose (``gitrun.TIME_BOUND``): a
FIFO at any name git reads in the tree makes the checkpoint stop at the bound, say so in one line, and let
the action go on (checkpoints off for the session). A corpus of the names git opens, then the reported
case through the real ``run``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from freeact_tui import gitrun
from freeact_tui.checkpoints.actions import ActionCheckpoints
from freeact_tui.checkpoints.engine import CheckpointStore
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply

# Every name git opens while it looks at a work tree (status, add, diff of the shadow repository).
FIFO_NAMES = (
    ".gitignore",
    "sub/.gitignore",
    "sub/deep/.gitignore",
    ".gitattributes",
    "sub/.gitattributes",
    ".gitmodules",
    ".mailmap",
    ".git/info/exclude",
)
BOUND = 2.0


@pytest.mark.parametrize("name", FIFO_NAMES)
async def test_a_fifo_where_git_reads_never_holds_the_checkpoint(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gitrun, "TIME_BOUND", BOUND)
    work = tmp_path / "work"
    (work / "sub" / "deep").mkdir(parents=True)
    (work / "a.txt").write_text("a")
    (work / "sub" / "deep" / "b.txt").write_text("b")
    if name.startswith(".git/"):
        (work / ".git" / "info").mkdir(parents=True)
    os.mkfifo(work / name)
    checkpoints = ActionCheckpoints(CheckpointStore(work, store_dir=tmp_path / "store"))
    started = time.monotonic()
    made = await checkpoints.before_action("before code")
    elapsed = time.monotonic() - started
    assert elapsed < 4 * BOUND + 5, elapsed  # bounded: one git at most waits out the bound
    if made is None:  # git opened the FIFO: stopped, said in one line, and off for the session
        assert checkpoints.disabled_reason is not None
        assert "did not finish" in checkpoints.disabled_reason and "FIFO" in checkpoints.disabled_reason
        assert checkpoints.store is None


@pytest.mark.kernel
@pytest.mark.timeout(300)
def test_run_with_a_fifo_gitignore_finishes_and_the_action_runs(tmp_path: Path) -> None:
    """The reported case: ``run`` in a folder whose ``.gitignore`` is a FIFO finished never."""
    work = tmp_path / "work"
    work.mkdir()
    os.mkfifo(work / ".gitignore")
    with FakeOpenAI() as server:
        server.script(
            Reply(
                tool_calls=[
                    ToolCallReply("ipybox_execute_ipython_cell", {"code": "open('made.txt', 'w').write('x')"})
                ]
            ),
            Reply("done"),
        )
        done = subprocess.run(
            [sys.executable, "-m", "freeact_tui", "run", "--base-url", server.url, "--model", "fake-model",
             "--allow", "code:*", "-o", "json", "write"],
            cwd=work, input="", capture_output=True, text=True, timeout=240, env=os.environ.copy(),
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (work / "made.txt").read_text() == "x"  # the action ran
    assert "did not finish" in done.stderr and "FIFO" in done.stderr, done.stderr  # and the skip was said
    assert json.loads(done.stdout.strip().splitlines()[-1])
