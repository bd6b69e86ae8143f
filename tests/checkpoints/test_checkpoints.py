"""Checkpoints with real git and real files: what is recorded, what a restore brings back, and what
is never touched (the working directory's own files beyond the restore, a user's ``.git``)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from freeact_tui.checkpoints.actions import ActionCheckpoints
from freeact_tui.checkpoints.engine import (
    CheckpointError,
    CheckpointLimits,
    CheckpointStore,
    CheckpointsUnavailable,
    FileChange,
)
from freeact_tui.checkpoints.restore import remove_files
from freeact_tui.project import paths
from freeact_tui.project.config import Config, read_toml

GIT_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def files_of(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (its ``.git`` excluded) with its content."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith(".git/"):
            out[rel] = path.read_bytes()
    return out


def every_path(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def fingerprint(tree: Path) -> dict[str, tuple[int, str]]:
    """mtime and content hash of every file under ``tree`` (to prove nothing there changed)."""
    return {
        p.relative_to(tree).as_posix(): (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
        for p in sorted(tree.rglob("*"))
        if p.is_file()
    }


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, env=GIT_ENV, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def work(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "work"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "README.md").write_text("# project\n")
    (root / "src" / "main.py").write_text("print('hello')\n")
    (root / "src" / "pkg" / "util.py").write_text("def f():\n    return 1\n")
    return root


@pytest.fixture
def store(work: Path) -> CheckpointStore:
    return CheckpointStore(work)


async def test_python_writes_new_and_deleted_files_in_nested_dirs_are_restored(
    work: Path, store: CheckpointStore
) -> None:
    before = files_of(work)
    first = await store.checkpoint("before action 1", {"turn": 1, "tool_call_id": "c1"})
    assert first is not None and first.label == "before action 1" and first.meta["turn"] == 1

    (work / "src" / "main.py").write_text("print('changed')\n")
    (work / "src" / "pkg" / "util.py").unlink()
    (work / "src" / "deep" / "er").mkdir(parents=True)
    (work / "src" / "deep" / "er" / "new.py").write_text("x = 1\n")

    assert sorted(await store.changes(first)) == [
        FileChange("src/deep/er/new.py", "added"),
        FileChange("src/main.py", "modified"),
        FileChange("src/pkg/util.py", "deleted"),
    ]
    result = await store.restore(first)
    assert files_of(work) == before
    assert not (work / "src" / "deep").exists()  # directories created since are gone too
    assert sorted(result.restored) == ["src/main.py", "src/pkg/util.py"]
    assert result.removed == ("src/deep/er/new.py",)
    assert result.not_restorable == ()


async def test_nothing_changed_gives_none_and_checkpoints_persist_across_instances(
    work: Path, store: CheckpointStore
) -> None:
    first = await store.checkpoint("one")
    assert first is not None
    assert await store.checkpoint("two") is None
    os.utime(work / "README.md")  # touched, same content: still nothing to record
    assert await store.checkpoint("three") is None
    (work / "README.md").write_text("# project v2\n")
    second = await store.checkpoint("four", {"n": 4})
    assert second is not None

    again = CheckpointStore(work)  # e.g. after the app restarts and resumes the session
    listed = await again.list()
    assert [c.label for c in listed] == ["four", "one"]
    assert listed[0].meta == {"n": 4} and listed[0].id == second.id
    assert (await again.latest()) == listed[0]
    assert (await again.get(first.id[:12])).id == first.id
    with pytest.raises(CheckpointError, match="No checkpoint"):
        await again.get("0" * 40)
    # The shadow repository lives in the app's data dir, keyed by the working dir.
    assert store.git_dir.parent == paths.checkpoints_dir()
    assert (store.git_dir / "freeact-root").read_text().strip() == str(work)


async def test_shell_rm_and_mv_are_seen_and_undone(work: Path, store: CheckpointStore) -> None:
    before = files_of(work)
    first = await store.checkpoint("before shell")
    assert first is not None
    shell = await asyncio.create_subprocess_shell(
        "rm README.md && mv src/pkg src/lib && mkdir -p out && echo hi > out/x.txt", cwd=work
    )
    assert await shell.wait() == 0

    changes = {c.path: c.status for c in await store.changes(first)}
    assert changes == {
        "README.md": "deleted",
        "src/pkg/util.py": "deleted",
        "src/lib/util.py": "added",
        "out/x.txt": "added",
    }
    text = await store.diff(first)
    assert "rename from src/pkg/util.py" in text and "rename to src/lib/util.py" in text
    assert "deleted file mode" in text and "-# project" in text
    assert "+hi" in text

    await store.restore(first)
    assert files_of(work) == before
    assert not (work / "src" / "lib").exists() and not (work / "out").exists()


async def test_diff_between_checkpoints_is_a_unified_diff(work: Path, store: CheckpointStore) -> None:
    a = await store.checkpoint("a")
    (work / "src" / "main.py").write_text("print('hello')\nprint('world')\n")
    b = await store.checkpoint("b")
    assert a is not None and b is not None
    text = await store.diff(a, b)
    assert text.startswith("diff --git a/src/main.py b/src/main.py\n")
    assert "--- a/src/main.py\n+++ b/src/main.py\n" in text
    assert "+print('world')\n" in text and "-print('hello')" not in text
    assert await store.diff(b) == ""  # the working dir equals b
    assert await store.changes(a, b) == [FileChange("src/main.py", "modified")]


async def test_binary_files_within_limits_are_restored_byte_for_byte(work: Path) -> None:
    store = CheckpointStore(work, limits=CheckpointLimits(max_binary_bytes=4096, max_file_bytes=64 * 1024))
    blob = bytes(range(256)) * 8  # 2 KiB with NUL bytes: binary, under the binary limit
    (work / "data.bin").write_bytes(blob)
    first = await store.checkpoint("first")
    assert first is not None and first.skipped == ()
    (work / "data.bin").write_bytes(b"\0garbage")
    (work / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\0" + os.urandom(512))
    assert "Binary files" in await store.diff(first)
    await store.restore(first)
    assert (work / "data.bin").read_bytes() == blob
    assert not (work / "image.png").exists()


async def test_big_and_big_binary_files_are_skipped_and_said_so(work: Path) -> None:
    limits = CheckpointLimits(max_file_bytes=10_000, max_binary_bytes=1_000)
    store = CheckpointStore(work, limits=limits)
    (work / "huge.txt").write_text("line\n" * 4000)  # 20 kB of text: over the file limit
    (work / "model.bin").write_bytes(b"\0" * 2000)  # binary over the binary limit
    (work / "table.csv").write_text("a,b\n" * 500)  # 2 kB of text: kept (only binaries have the low limit)
    first = await store.checkpoint("first")
    assert first is not None
    reasons = {s.path: s.reason for s in first.skipped}
    assert set(reasons) == {"huge.txt", "model.bin"}
    assert "larger than the limit of 9.8 KiB (19.5 KiB)" in reasons["huge.txt"]
    assert reasons["model.bin"].startswith("a binary file larger than the limit of 1000 B")
    assert (await store.list())[0].skipped == first.skipped  # kept with the checkpoint

    (work / "huge.txt").write_text("changed\n" * 4000)
    (work / "table.csv").write_text("changed\n")
    result = await store.restore(first)
    assert (work / "table.csv").read_text() == "a,b\n" * 500
    assert (work / "huge.txt").read_text() == "changed\n" * 4000  # never stored: left as is
    not_restorable = {s.path: s.reason for s in result.not_restorable}
    assert set(not_restorable) == {"huge.txt", "model.bin"}
    assert not_restorable["huge.txt"].startswith("not in the checkpoint: larger than")


async def test_a_file_that_grows_past_the_limit_is_dropped_not_kept_stale(work: Path) -> None:
    store = CheckpointStore(work, limits=CheckpointLimits(max_file_bytes=1000))
    (work / "log.txt").write_text("small\n")
    first = await store.checkpoint("small")
    (work / "log.txt").write_text("x" * 5000)
    grown = await store.checkpoint("grown")
    assert first is not None and grown is not None
    assert [s.path for s in grown.skipped] == ["log.txt"]
    assert await store.changes(first, grown) == [FileChange("log.txt", "deleted")]
    # Restoring would overwrite a version no checkpoint holds: it is left as is, and said so.
    result = await store.restore(first)
    assert (work / "log.txt").read_text() == "x" * 5000
    assert [s.path for s in result.not_restorable] == ["log.txt"]
    assert "could not be undone" in result.not_restorable[0].reason


async def test_gitignore_and_the_users_info_exclude_are_honoured(work: Path, store: CheckpointStore) -> None:
    git(work, "init", "-q")
    (work / ".git" / "info").mkdir(exist_ok=True)
    (work / ".git" / "info" / "exclude").write_text("secret.env\n")
    (work / ".gitignore").write_text("*.log\nbuild/\n")
    (work / "src" / ".gitignore").write_text("generated.py\n")
    (work / "app.log").write_text("noise\n")
    (work / "build").mkdir()
    (work / "build" / "out.o").write_bytes(b"\0\1")
    (work / "src" / "generated.py").write_text("# generated\n")
    (work / "secret.env").write_text("TOKEN=1\n")
    first = await store.checkpoint("first")
    assert first is not None

    for name in ("app.log", "build/out.o", "src/generated.py", "secret.env"):
        (work / name).write_text("changed\n")
    (work / "build" / "new.o").write_text("new\n")
    assert await store.changes(first) == []
    assert await store.checkpoint("second") is None

    (work / "src" / "main.py").write_text("changed\n")
    await store.restore(first)
    assert (work / "src" / "main.py").read_text() == "print('hello')\n"
    # Ignored files are not the checkpoint's business: neither restored nor removed.
    assert (work / "build" / "new.o").read_text() == "new\n"
    assert (work / "app.log").read_text() == "changed\n"


async def test_nothing_is_written_into_a_plain_working_dir(work: Path, store: CheckpointStore) -> None:
    layout = every_path(work)
    first = await store.checkpoint("a")
    (work / "README.md").write_text("edited\n")
    assert first is not None
    await store.changes(first)
    await store.diff(first)
    await store.list()
    await store.checkpoint("b")
    await store.restore(first)
    assert every_path(work) == layout  # no .git, no lock or temp file, nothing
    assert not (work / ".git").exists()


async def test_a_users_git_repository_is_left_untouched(work: Path, store: CheckpointStore) -> None:
    git(work, "init", "-q")
    git(work, "add", "-A")
    git(work, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "init")
    (work / "src" / "main.py").write_text("print('uncommitted')\n")  # the user's own pending work
    (work / "staged.txt").write_text("staged\n")
    git(work, "add", "staged.txt")
    user_status = git(work, "status", "--porcelain")
    dot_git = fingerprint(work / ".git")
    head = (work / ".git" / "HEAD").read_text()

    first = await store.checkpoint("before")
    assert first is not None
    (work / "README.md").write_text("agent edit\n")
    (work / "new.txt").write_text("agent file\n")
    await store.checkpoint("after")
    await store.diff(first)
    result = await store.restore(first)
    assert sorted(result.restored) == ["README.md"] and result.removed == ("new.txt",)

    assert fingerprint(work / ".git") == dot_git  # HEAD, index, objects, refs: same bytes, same mtimes
    assert (work / ".git" / "HEAD").read_text() == head
    assert git(work, "status", "--porcelain") == user_status
    assert (work / "src" / "main.py").read_text() == "print('uncommitted')\n"


async def test_restore_of_some_paths_only_and_paths_outside(work: Path, store: CheckpointStore) -> None:
    first = await store.checkpoint("first")
    assert first is not None
    (work / "README.md").write_text("edited\n")
    (work / "src" / "main.py").write_text("edited\n")
    (work / "src" / "pkg" / "new.py").write_text("new\n")
    result = await store.restore(first, ["src/pkg", work / "README.md", "/etc/passwd"])
    assert (work / "README.md").read_text() == "# project\n"
    assert not (work / "src" / "pkg" / "new.py").exists()
    assert (work / "src" / "main.py").read_text() == "edited\n"  # not asked for
    assert [(s.path, s.reason) for s in result.not_restorable] == [
        ("/etc/passwd", "outside the working directory (not covered)")
    ]


async def test_a_restore_is_itself_undoable(work: Path, store: CheckpointStore) -> None:
    first = await store.checkpoint("first")
    assert first is not None
    (work / "README.md").write_text("work worth keeping\n")
    (work / "notes.txt").write_text("notes\n")
    result = await store.restore(first)
    assert not (work / "notes.txt").exists()
    assert result.backup.meta == {"restore_of": first.id}
    await store.restore(result.backup)
    assert (work / "README.md").read_text() == "work worth keeping\n"
    assert (work / "notes.txt").read_text() == "notes\n"


async def test_writes_outside_the_working_dir_are_not_covered(tmp_path: Path, work: Path) -> None:
    store = CheckpointStore(work)
    outside = tmp_path / "elsewhere.txt"
    assert store.root == work
    assert store.covers(work / "src" / "main.py") and store.covers("src/new.py") and store.covers(work)
    assert not store.covers(outside) and not store.covers("../elsewhere.txt") and not store.covers("/tmp")
    first = await store.checkpoint("first")
    assert first is not None
    outside.write_text("written by the agent\n")
    assert await store.changes(first) == []
    await store.restore(first)
    assert outside.read_text() == "written by the agent\n"


async def test_a_nested_git_repository_is_reported_not_stored(work: Path, store: CheckpointStore) -> None:
    nested = work / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    (nested / "code.py").write_text("x = 1\n")
    nested_git = fingerprint(nested / ".git")
    first = await store.checkpoint("first")
    assert first is not None
    assert [(s.path, "nested git repository" in s.reason) for s in first.skipped] == [("vendor/lib", True)]
    (nested / "code.py").write_text("x = 2\n")
    result = await store.restore(first)
    assert (nested / "code.py").read_text() == "x = 2\n"  # not covered: left alone, and said so
    assert [s.path for s in result.not_restorable] == ["vendor/lib"]
    assert fingerprint(nested / ".git") == nested_git


async def test_too_many_new_files_turn_checkpoints_off_with_a_message(work: Path) -> None:
    store = CheckpointStore(work, limits=CheckpointLimits(max_files=5))
    for i in range(10):
        (work / f"f{i}.txt").write_text(str(i))
    with pytest.raises(CheckpointsUnavailable, match="exceed the limit of 5"):
        await store.checkpoint("first")


async def test_missing_git_is_a_clear_error(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(CheckpointsUnavailable, match="`git` is not installed"):
        await CheckpointStore(work, git=str(work / "no-such-git")).checkpoint("x")
    monkeypatch.setenv("PATH", str(work))
    with pytest.raises(CheckpointsUnavailable, match="`git` is not installed"):
        CheckpointStore(work)


async def test_concurrent_checkpoints_are_serialised(work: Path, store: CheckpointStore) -> None:
    other = CheckpointStore(work)  # a second app instance in the same directory
    await store.checkpoint("base")
    (work / "README.md").write_text("changed\n")
    made = await asyncio.gather(store.checkpoint("a"), other.checkpoint("b"), store.changes("HEAD"))
    assert sum(c is not None for c in made[:2]) == 1  # one records the change, the other sees none
    assert len(await store.list()) == 2


def test_the_example_config_documents_the_checkpoint_keys_with_their_defaults() -> None:
    example = read_toml(Path(__file__).resolve().parents[2] / "config.example.toml")
    keys = [k for k in Config.model_fields if k.startswith("checkpoint")]
    assert keys == [
        "checkpoints",
        "checkpoint_max_file_bytes",
        "checkpoint_max_binary_bytes",
        "checkpoint_max_files",
    ]
    assert {k: example[k] for k in keys} == {k: Config.model_fields[k].default for k in keys}


async def test_the_action_hook_follows_the_config(tmp_path: Path, work: Path) -> None:
    config = Config(working_dir=work, sessions_dir=work / "sessions", checkpoint_max_file_bytes=100)
    hook = ActionCheckpoints.from_config(config)
    assert hook.enabled and hook.root == work
    (work / "sessions").mkdir()
    (work / "sessions" / "s.jsonl").write_text("{}\n")
    (work / "big.txt").write_text("x" * 500)
    first = await hook.before_action("before action 1", {"tool_call_id": "c1"})
    assert first is not None and first.meta == {"tool_call_id": "c1"}
    assert [s.path for s in first.skipped] == ["big.txt"]
    # Nothing changed: the newest checkpoint still holds the state before the next action.
    assert (await hook.before_action("before action 2")) == first
    (work / "sessions" / "s.jsonl").write_text("{}\n{}\n")  # the session history is never rewound
    assert hook.store is not None and await hook.store.changes(first) == []

    off = ActionCheckpoints.from_config(config.model_copy(update={"checkpoints": False}))
    assert not off.enabled and off.disabled_reason and "checkpoints = false" in off.disabled_reason
    assert await off.before_action("x") is None
    remote = ActionCheckpoints.from_config(config, execution="remote")
    assert remote.root is None and "remote mode" in (remote.disabled_reason or "")


async def test_the_action_hook_turns_itself_off_instead_of_failing_an_action(work: Path) -> None:
    hook = ActionCheckpoints.from_config(Config(working_dir=work, checkpoint_max_files=2))
    for i in range(5):
        (work / f"f{i}.txt").write_text(str(i))
    assert await hook.before_action("before action 1") is None
    assert not hook.enabled and "exceed the limit of 2" in (hook.disabled_reason or "")
    assert await hook.before_action("before action 2") is None


async def test_odd_names_modes_symlinks_and_a_file_turned_directory(
    work: Path, store: CheckpointStore
) -> None:
    names = ["with space.txt", "ünïcödé.txt", "new\nline.txt", "*star?.txt", "-dash.txt"]
    for name in names:
        (work / name).write_text(name)
    (work / "run.sh").write_text("#!/bin/sh\n")
    (work / "run.sh").chmod(0o755)
    (work / "link").symlink_to("run.sh")
    (work / "thing").write_text("a file\n")
    first = await store.checkpoint("first")
    assert first is not None

    for name in names:
        (work / name).unlink()
    (work / "run.sh").chmod(0o644)
    (work / "link").unlink()
    (work / "link").symlink_to("README.md")
    (work / "thing").unlink()
    (work / "thing").mkdir()
    (work / "thing" / "inside.txt").write_text("now a directory\n")
    changes = dict(await store.changes(first))
    assert changes["thing"] == "deleted" and changes["thing/inside.txt"] == "added"
    assert changes["run.sh"] == changes["link"] == "modified"

    await store.restore(first)
    assert all((work / name).read_text() == name for name in names)
    assert (work / "run.sh").stat().st_mode & 0o777 == 0o755
    assert os.readlink(work / "link") == "run.sh"
    assert (work / "thing").read_text() == "a file\n"


async def test_rewrites_of_the_same_size_in_quick_succession_are_all_seen(
    work: Path, store: CheckpointStore
) -> None:
    made = []
    for letter in "abcdefgh":  # same size, well within one second: git's racy-clean case
        (work / "README.md").write_text(letter * 8)
        made.append(await store.checkpoint(letter))
    assert all(c is not None for c in made)
    assert [c.label for c in await store.list()] == list("hgfedcba")


def test_removing_created_files_never_follows_a_symlink_out_of_the_root(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "made").mkdir(parents=True)
    outside.mkdir()
    (outside / "x.txt").write_text("not ours\n")
    (root / "d").symlink_to(outside)
    (root / "made" / "new.txt").write_text("created by an action\n")
    remove_files(root, ["d/x.txt", "made/new.txt"])
    assert (outside / "x.txt").read_text() == "not ours\n"
    assert not (root / "made").exists()  # the created file went, and its emptied directory


async def test_a_cancelled_checkpoint_leaves_the_store_usable(work: Path, store: CheckpointStore) -> None:
    for d in range(20):
        (work / f"d{d}").mkdir()
        for f in range(100):
            (work / f"d{d}" / f"f{f}.txt").write_text(f"{d}/{f}\n")
    for delay in (0.005, 0.02, 0.05, 0.1):  # cancelled somewhere in status, update-index or commit
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(store.checkpoint("cancelled"), delay)
    assert not (store.git_dir / "index.lock").exists()
    first = await store.checkpoint("after the cancellations")
    latest = await store.latest()
    assert latest is not None and (first is None or latest == first)
    (work / "d3" / "f7.txt").write_text("changed\n")
    assert await store.changes(latest) == [FileChange("d3/f7.txt", "modified")]


async def test_checkpoints_chain_on_after_the_store_is_packed(work: Path, store: CheckpointStore) -> None:
    first = await store.checkpoint("first")
    assert first is not None
    await store.gc(now=True)
    assert not (store.git_dir / "refs" / "heads" / "checkpoints").exists()  # the ref is packed now
    assert await store.checkpoint("unchanged") is None
    (work / "README.md").write_text("after gc\n")
    second = await store.checkpoint("second")
    assert second is not None
    assert [c.id for c in await store.list()] == [second.id, first.id]
    await store.restore(first)
    assert (work / "README.md").read_text() == "# project\n"
