"""Git reads more config than the repository's own ``.git/config``: a submodule's (its git dir under
``.git/modules``, at any depth, or wherever its ``.git`` file points) and a linked worktree's. Every
program-running way of the corpus, placed in each of those, makes every default-allowed git command ask
(``gitrun.repo_program_keys``), and judging runs none of them (issue #39 F4). Real git throughout."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from freeact_tui import gitrun
from freeact_tui.checkpoints.engine import CheckpointStore
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.toolcalls import ShellAction
from freeact_tui.tui.file_index import list_files
from tests.core.test_gitrun import DEFAULT_GIT, Hostile, _git, corpus, make_repo, markers  # noqa: F401

_ID = ("-c", "user.name=t", "-c", "user.email=t@t")


def _with_submodule(tmp_path: Path, mark: str, name: str) -> tuple[Path, Path]:
    """A repository with a submodule ``sub`` (checked out, a change in it): the top and the checkout."""
    base = tmp_path / name
    base.mkdir()
    origin = make_repo(base, None, mark)
    _git(origin, "checkout", "-q", "--", "f.txt")
    top = base / "top"
    top.mkdir()
    _git(top, "init", "-q", "-b", "main")
    _git(top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(origin), "sub")
    _git(top, *_ID, "commit", "-qm", "sub")
    (top / "sub" / "f.txt").write_text("changed in the submodule\n")
    return top, top / "sub"


def _in_module_git_dir(top: Path, sub: Path) -> Path:
    return top / ".git" / "modules" / "sub"


def _in_pointed_git_dir(top: Path, sub: Path) -> Path:
    """The submodule's ``.git`` file points at a git dir outside the repository."""
    moved = top.parent / "elsewhere.git"
    shutil.move(str(top / ".git" / "modules" / "sub"), moved)
    (sub / ".git").write_text(f"gitdir: {moved}\n")
    _git(top, "config", "--file", str(moved / "config"), "core.worktree", str(sub))
    return moved


def _in_nested_module(top: Path, sub: Path) -> Path:
    """A submodule's own git dir under ``modules/`` of another's (a submodule of a submodule)."""
    nested = top / ".git" / "modules" / "sub" / "modules" / "deeper"
    shutil.copytree(top / ".git" / "modules" / "sub", nested, ignore=shutil.ignore_patterns("modules"))
    return nested


PLACES: dict[str, Callable[[Path, Path], Path]] = {
    "module-git-dir": _in_module_git_dir,
    "gitdir-pointer": _in_pointed_git_dir,
    "nested-module": _in_nested_module,
}


def _place(hostile: Hostile, git_dir: Path, work: Path, mark: str) -> None:
    if hostile.setup is not None:
        hostile.setup(work, mark)  # attributes land in the submodule's checkout, as a clone brings them
    for key, value in hostile.config:
        _git(work.parent, "config", "--file", str(git_dir / "config"), key, value)


@pytest.mark.parametrize("place", sorted(PLACES))
def test_every_program_key_in_every_nested_config_is_seen(
    place: str,
    tmp_path: Path,
    markers: tuple[Path, str, str],  # noqa: F811
) -> None:
    out, mark, hooks = markers
    for hostile in corpus(mark, hooks):
        if hostile.setup is not None and hostile.name in ("hooks", "signature", "include", "include-if"):
            continue  # set up in the top repository's own git dir: test_gitrun's corpus covers them there
        top, sub = _with_submodule(tmp_path, mark, f"{place}-{hostile.name}")
        git_dir = PLACES[place](top, sub)
        _place(hostile, git_dir, sub, mark)
        found = gitrun.repo_program_keys(top)
        assert found is None or found, (place, hostile.name)
        assert PermissionRules(working_dir=top).check(ShellAction("git diff")) == "ask", (place, hostile.name)
    assert list(out.iterdir()) == []  # judging a repository runs none of its programs


@pytest.mark.parametrize("command", DEFAULT_GIT)
def test_the_reported_submodule_textconv_asks(
    command: str,
    tmp_path: Path,
    markers: tuple[Path, str, str],  # noqa: F811
) -> None:
    """The reported case: ``.git/modules/sub/config`` names a textconv, ``sub/.gitattributes`` uses it,
    the top says ``diff.submodule=diff``: a default-allowed ``git diff`` ran it."""
    out, mark, _ = markers
    top, sub = _with_submodule(tmp_path, mark, "reported")
    _git(top, "config", "diff.submodule", "diff")
    (sub / ".gitattributes").write_text("* diff=evil\n")
    _git(sub, "config", "diff.evil.textconv", f"{mark} textconv")
    assert PermissionRules(working_dir=top).check(ShellAction(command)) == "ask"
    assert list(out.iterdir()) == []


def test_a_plain_repository_with_a_submodule_asks_nothing(
    tmp_path: Path,
    markers: tuple[Path, str, str],  # noqa: F811
) -> None:
    _, mark, _ = markers
    top, _ = _with_submodule(tmp_path, mark, "plain")
    assert gitrun.repo_program_keys(top) == []
    assert PermissionRules(working_dir=top).check(ShellAction("git diff")) == "allow"


@pytest.mark.parametrize("place", sorted(PLACES))
async def test_the_apps_own_git_runs_no_program_of_a_submodule(
    place: str, tmp_path: Path, markers: tuple[Path, str, str]  # noqa: F811
) -> None:
    """The ``@`` picker's listing and the checkpoints (status, add, diff, restore) in a repository whose
    submodule's config names programs, wherever that config is."""
    out, mark, hooks = markers
    for hostile in corpus(mark, hooks):
        if hostile.setup is not None and hostile.name in ("hooks", "signature", "include", "include-if"):
            continue
        top, sub = _with_submodule(tmp_path, mark, f"own-{place}-{hostile.name}")
        _place(hostile, PLACES[place](top, sub), sub, mark)
        list_files(top, use_git=True)
        store = CheckpointStore(top, store_dir=tmp_path / "store")
        first = await store.checkpoint("first")
        (sub / "f.txt").write_text("again\n")
        (top / "g.txt").write_text("new\n")
        await store.checkpoint("second")
        assert first is not None
        await store.diff(first)
        await store.restore(first)
        assert sorted(p.name for p in out.iterdir()) == [], (place, hostile.name)
