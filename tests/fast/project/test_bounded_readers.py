"""Every reader of a file the folder holds reads a regular file of bounded size, or nothing (issue #39).

The class: a clone puts something that is no plain file where the app reads one (``.gitignore ->
/dev/zero`` reads forever, a FIFO blocks ``open`` for good, a 5 GB sparse file fills memory). The
mechanism: ``project.files``, the one bounded reader. Each reader of the folder's files beside the
project files (the ``@`` picker's ``.gitignore``, a worktree's ``.git`` pointer, the plans an editor is
sent, the old text of a file an editor is shown a diff of, a file ``@``-mentioned) is tried with each
hostile stand-in and must answer at once with nothing read.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from freeact_tui.acp.plan import PlanWatch
from freeact_tui.acp.toolcall_view import _read as _read_for_diff
from freeact_tui.checkpoints.shadow_git import user_exclude_file
from freeact_tui.tui.file_index import _gitignore_patterns
from freeact_tui.tui.mentions import attach_mentions
from tests.hostile_files import STANDINS, within


def _gitignore(folder: Path, plant: Callable[[Path], None]) -> object:
    plant(folder / ".gitignore")
    return _gitignore_patterns(folder)


def _git_pointer(folder: Path, plant: Callable[[Path], None]) -> object:
    plant(folder / ".git")
    return user_exclude_file(folder)


def _git_commondir(folder: Path, plant: Callable[[Path], None]) -> object:
    (folder / "gitdir").mkdir()
    (folder / ".git").write_text("gitdir: gitdir\n")
    plant(folder / "gitdir" / "commondir")
    return user_exclude_file(folder)


def _plan(folder: Path, plant: Callable[[Path], None]) -> object:
    watch = PlanWatch([folder])
    plant(folder / "task.md")
    return watch.check()


def _acp_diff(folder: Path, plant: Callable[[Path], None]) -> object:
    plant(folder / "edited.py")
    return _read_for_diff(str(folder / "edited.py"))


def _mention(folder: Path, plant: Callable[[Path], None]) -> object:
    plant(folder / "notes.txt")
    text = attach_mentions("see @notes.txt", folder)
    return None if "\0" not in text and len(text) < 4096 else text


READERS: dict[str, Callable[[Path, Callable[[Path], None]], object]] = {
    "picker_gitignore": _gitignore,
    "worktree_git_pointer": _git_pointer,
    "worktree_commondir": _git_commondir,
    "acp_plan": _plan,
    "acp_diff_old_text": _acp_diff,
    "prompt_mention": _mention,
}


@pytest.mark.parametrize("standin", sorted(STANDINS))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_stand_in_for_a_file_is_never_read(tmp_path: Path, reader: str, standin: str) -> None:
    with within(10):
        result = READERS[reader](tmp_path, STANDINS[standin])
    assert result in ([], None), result
