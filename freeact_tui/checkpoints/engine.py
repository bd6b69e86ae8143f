"""Checkpoints of a working directory in a shadow git repository, so that every action is undoable.

The shadow repository lives in the app's data directory (one per working directory) and is used
as ``git --git-dir=<shadow> --work-tree=<working dir>``: the user's own ``.git`` is never read
for history nor written, and nothing is written into the working directory. The working
directory's ``.gitignore`` files and its ``.git/info/exclude`` are honoured; files beyond the size
limits are skipped and reported. The shadow index is kept warm, so a checkpoint stats every file
but hashes only the changed ones. Only the working directory is covered (``root``): a write
elsewhere cannot be seen, let alone undone.
"""

from __future__ import annotations

import asyncio
import builtins
import hashlib
import os
import shutil
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from freeact_tui.checkpoints.housekeeping import HOUSEKEEPING, Housekeeping
from freeact_tui.checkpoints.limits import (
    NESTED_REPO_REASON,
    CheckpointLimits,
    SkippedFile,
    limit_reason,
)
from freeact_tui.checkpoints.records import (
    LOG_FORMAT,
    STATUS,
    Checkpoint,
    FileChange,
    RestoreResult,
    commit_message,
    encode_paths,
    name_status,
    parse_log,
    split_z,
)
from freeact_tui.checkpoints.restore import RestorePlan, remove_files
from freeact_tui.checkpoints.shadow_git import (
    CheckpointError,
    CheckpointsUnavailable,
    ShadowGit,
    user_exclude_file,
)
from freeact_tui.execution.private_files import private_dir
from freeact_tui.project import files as projectfiles
from freeact_tui.project import paths

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Linux/macOS: the in-process lock still holds
    fcntl = None  # type: ignore[assignment]

_BRANCH = "refs/heads/checkpoints"
_BULK_FILES = 500
_BULK_ENV = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.bigFileThreshold", "GIT_CONFIG_VALUE_0": "1"}
# A split index: each checkpoint writes only the entries that changed, not the whole index (on a
# 10,000-file tree this halves the cost of update-index and write-tree); a shared index that is
# no longer used is deleted at once instead of lingering for two weeks.
_SPLIT_INDEX = (("core.splitIndex", "true"), ("splitIndex.sharedIndexExpire", "now"))
_EXCLUDE_HEADER = "# written by freeact-tui: the working directory's .git/info/exclude and extra excludes\n"


def store_key(root: Path) -> str:
    """The shadow repository's folder name for a working directory."""
    return hashlib.sha256(str(root).encode("utf-8")).hexdigest()[:20]


class CheckpointStore:
    """Checkpoints of one working directory.

    Args:
        root: The working directory (the only place covered).
        store_dir: Where shadow repositories live (default: ``checkpoints`` in the data dir).
        limits: Size limits; skipped files are reported in each checkpoint's ``skipped``.
        exclude: Extra gitignore patterns never checkpointed (e.g. a sessions dir inside ``root``).
        git: The git executable (default: found on ``PATH``).

    Raises:
        CheckpointsUnavailable: ``git`` is not installed (from construction or any call).
    """

    def __init__(
        self,
        root: Path,
        *,
        store_dir: Path | None = None,
        limits: CheckpointLimits | None = None,
        exclude: Sequence[str] = (),
        git: str | None = None,
    ) -> None:
        self.root = Path(root).expanduser().resolve()
        self.git_dir = (store_dir or paths.checkpoints_dir()) / store_key(self.root)
        self.limits = limits or CheckpointLimits()
        self._exclude = [p for p in exclude if p.strip()]
        self._git = ShadowGit(self.git_dir, self.root, git)
        self._lock = asyncio.Lock()
        self._housekeeping = Housekeeping(self._git, self._locked)
        self._ready = False
        self._trees: dict[str, str] = {}  # commit -> tree of the newest checkpoint

    def covers(self, path: str | Path) -> bool:
        """True when ``path`` (absolute, or relative to the root) is inside the covered root."""
        target = Path(path).expanduser()
        target = (target if target.is_absolute() else self.root / target).resolve()
        return target == self.root or self.root in target.parents

    # --- public API ----------------------------------------------------------------------------

    async def checkpoint(self, label: str, meta: Mapping[str, Any] | None = None) -> Checkpoint | None:
        """Record the working directory's state; None when nothing changed since the last one.

        Args:
            label: One line saying what comes next (e.g. ``"before action 3: code"``).
            meta: JSON-serialisable data kept with it (session id, turn, tool call id …).

        Raises:
            CheckpointsUnavailable: git is missing, or too many new files (see ``max_files``).
            CheckpointError: git failed (e.g. the shadow repository is damaged).
        """
        async with self._locked():
            return await self._checkpoint(label, dict(meta or {}))

    async def latest(self) -> Checkpoint | None:
        """The newest checkpoint (None before the first)."""
        found = await self.list(limit=1)
        return found[0] if found else None

    async def list(self, limit: int | None = None) -> list[Checkpoint]:
        """All checkpoints, newest first."""
        async with self._locked():
            if await self._head() is None:
                return []
            args = ["log", f"--format={LOG_FORMAT}", _BRANCH]
            if limit is not None:
                args.insert(1, f"-n{max(limit, 0)}")
            out = await self._git.run(*args)
        return [
            parse_log(record) for record in out.decode("utf-8", "replace").split("\x1e") if record.strip()
        ]

    async def get(self, checkpoint_id: str) -> Checkpoint:
        """The checkpoint with this id (a full or unique abbreviated commit id).

        Raises:
            CheckpointError: no such checkpoint.
        """
        async with self._locked():
            try:
                out = await self._git.run(
                    "log", "-1", f"--format={LOG_FORMAT}", f"{checkpoint_id}^{{commit}}", "--"
                )
            except CheckpointError:
                raise CheckpointError(f"No checkpoint {checkpoint_id!r} for {self.root}.") from None
        return parse_log(out.decode("utf-8", "replace").rstrip("\x1e\n"))

    async def changes(
        self, since: Checkpoint | str, until: Checkpoint | str | None = None
    ) -> builtins.list[FileChange]:
        """The files changed from ``since`` to ``until`` (None: the working directory now)."""
        async with self._locked():
            a, b = await self._pair(since, until)
            out = await self._git.run("diff-tree", "-r", "-z", "--no-renames", "--name-status", a, b)
        return [FileChange(path, STATUS.get(code, "modified")) for code, path in name_status(out)]

    async def diff(self, a: Checkpoint | str, b: Checkpoint | str | None = None) -> str:
        """The unified diff from ``a`` to ``b`` (None: the working directory now), renames detected."""
        async with self._locked():
            left, right = await self._pair(a, b)
            out = await self._git.run(
                "diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M", left, right
            )
        return out.decode("utf-8", errors="replace")

    async def restore(
        self, checkpoint: Checkpoint | str, paths: Sequence[str | Path] | None = None
    ) -> RestoreResult:
        """Bring the working directory (or only ``paths`` in it) back to ``checkpoint``'s state.

        Modified files get their old content, files created since are removed, deleted files are
        recreated. The state just before is checkpointed first (``backup``), so a restore is itself
        undoable. Files the checkpoint skipped, paths outside the root, and current files too big
        to back up are left as they are and listed in ``not_restorable``.

        Raises:
            CheckpointError: no such checkpoint, or git failed.
        """
        target = checkpoint if isinstance(checkpoint, Checkpoint) else await self.get(checkpoint)
        async with self._locked():
            return await self._restore(target, paths)

    # --- internals -----------------------------------------------------------------------------

    @asynccontextmanager
    async def _locked(self) -> AsyncIterator[None]:
        async with self._lock:
            private_dir(self.git_dir.parent)  # file modes: the store holds copies of .env files and keys
            fd = os.open(self.git_dir.with_name(self.git_dir.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                if fcntl is not None:  # another app instance in the same directory shares the store
                    await asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX)
                await self._ensure_repo()
                yield
            finally:
                os.close(fd)  # closing releases the flock

    async def _ensure_repo(self) -> None:
        if self._ready:
            return
        if not self.root.is_dir():
            raise CheckpointError(f"The working directory {self.root} does not exist.")
        if not (self.git_dir / "HEAD").is_file():
            # Built aside and renamed into place: an interrupted start leaves no half repository.
            building = self.git_dir.with_name(f"{self.git_dir.name}.new-{uuid.uuid4().hex[:8]}")
            git = ShadowGit(building, self.root, self._git.git, timeout=self._git.timeout)
            try:
                await git.run("init", "--quiet", "--template=")
                for key, value in (
                    ("core.untrackedCache", "true"),  # status skips unchanged untracked dirs
                    ("gc.auto", "0"),  # never collect during an action; see gc()
                    ("core.logAllRefUpdates", "false"),
                    *_SPLIT_INDEX,
                ):
                    await git.run("config", key, value)
                await git.run("symbolic-ref", "HEAD", _BRANCH)
                paths.atomic_write_text(building / "freeact-root", str(self.root) + "\n")  # mode 600
                if self.git_dir.exists():  # an empty or broken leftover: no checkpoint lives there
                    shutil.rmtree(self.git_dir)
                building.rename(self.git_dir)
            finally:
                shutil.rmtree(building, ignore_errors=True)
        else:
            private_dir(self.git_dir)  # file modes: a store made before they were private
        if not self._has_split_index():
            for key, value in _SPLIT_INDEX:  # a store made before the split index: upgrade it once
                await self._git.run("config", key, value)
        self._ready = True

    def _has_split_index(self) -> bool:
        with suppress(OSError):
            return (
                "splitindex"
                in projectfiles.read_text(self.git_dir / "config", errors="replace").lower()
            )
        return False

    def _sync_excludes(self) -> None:
        parts = [_EXCLUDE_HEADER, *(p + "\n" for p in self._exclude)]
        user = user_exclude_file(self.root)
        if user is not None:
            with suppress(OSError):
                parts.append(projectfiles.read_text(user, errors="replace") + "\n")
        wanted = "".join(parts)
        target = self.git_dir / "info" / "exclude"
        with suppress(OSError):
            if projectfiles.read_text(target, errors="replace") == wanted:
                return  # unchanged: keep git's untracked cache valid
        target.parent.mkdir(exist_ok=True, mode=0o700)  # file modes: private
        paths.atomic_write_text(target, wanted, mode=0o600)

    def _read_ref(self) -> str | None:
        # Our own repository: reading the ref file spares a git process per checkpoint.
        with suppress(OSError):
            return projectfiles.read_text(self.git_dir / _BRANCH, errors="replace").strip() or None
        with suppress(OSError):  # packed by gc()
            for line in projectfiles.read_text(self.git_dir / "packed-refs", errors="replace").splitlines():
                if line.endswith(" " + _BRANCH):
                    return line.split()[0]
        return None

    def _write_ref(self, commit: str) -> None:
        # Our own repository, under our lock: the loose ref written as git does (temp file, rename),
        # which spares a git process per checkpoint. A loose ref wins over a packed one.
        ref = self.git_dir / _BRANCH
        ref.parent.mkdir(parents=True, exist_ok=True)
        tmp = ref.with_name(f"{ref.name}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # file modes: private
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(commit + "\n")
            os.replace(tmp, ref)
        finally:
            with suppress(FileNotFoundError):
                tmp.unlink()

    async def _head(self) -> tuple[str, str] | None:
        """The newest checkpoint's (commit, tree), or None before the first."""
        commit = self._read_ref()
        if commit is None:
            return None
        tree = self._trees.get(commit)
        if tree is None:
            tree = await self._git.text("rev-parse", f"{commit}^{{tree}}")
            self._trees = {commit: tree}
        return commit, tree

    async def _snapshot(self, head_tree: str | None = None) -> tuple[str, tuple[SkippedFile, ...]]:
        """Stage the working directory into the shadow index: (its tree, the files skipped)."""
        self._sync_excludes()
        # "normal" untracked mode lets git's untracked cache skip unchanged directories (it does
        # not work with "all"); new directories are expanded below.
        out = await self._git.run(
            "status", "--porcelain=v1", "-z", "--untracked-files=normal", "--no-renames"
        )
        entries = [(e[0], e[1], e[3:]) for e in split_z(out)]
        if not entries:  # index == worktree and index == newest checkpoint
            return head_tree or await self._git.text("write-tree", "--missing-ok"), ()
        new_dirs = [path for x, _, path in entries if x == "?" and path.endswith("/")]
        # A file that became a directory: "normal" mode does not list the directory's files.
        new_dirs += [path + "/" for _, y, path in entries if y in "DT" and self._is_real_dir(path)]
        if new_dirs:
            entries = [e for e in entries if not (e[0] == "?" and e[2].endswith("/"))]
            for start in range(0, len(new_dirs), 500):
                listed = await self._git.run(
                    "ls-files", "-z", "--others", "--exclude-standard", "--", *new_dirs[start : start + 500]
                )
                entries.extend(("?", "?", path) for path in split_z(listed))
        to_update, to_drop, skipped = await asyncio.to_thread(self._sort_entries, entries)
        if len(to_update) > self.limits.max_files:
            raise CheckpointsUnavailable(
                f"Checkpoints are off for {self.root}: {len(to_update)} new files exceed the limit of "
                f"{self.limits.max_files} (add them to .gitignore or raise checkpoint_max_files)."
            )
        if to_update:
            # Many new files (the first checkpoint): one pack instead of a loose object per file,
            # several times faster; the few files of an action stay loose (no pack per action).
            bulk = _BULK_ENV if len(to_update) > _BULK_FILES else None
            await self._git.run(
                "update-index", "--add", "--remove", "-z", "--stdin", input=encode_paths(to_update), env=bulk
            )
        if to_drop:
            await self._git.run(
                "update-index", "--force-remove", "-z", "--stdin", input=encode_paths(to_drop)
            )
        return await self._git.text("write-tree", "--missing-ok"), tuple(skipped)

    def _is_real_dir(self, rel: str) -> bool:
        path = self.root / rel
        return path.is_dir() and not path.is_symlink()

    def _sort_entries(
        self, entries: builtins.list[tuple[str, str, str]]
    ) -> tuple[builtins.list[str], builtins.list[str], builtins.list[SkippedFile]]:
        to_update: builtins.list[str] = []
        to_drop: builtins.list[str] = []
        skipped: builtins.list[SkippedFile] = []
        for x, y, path in entries:
            if x == "?" and path.endswith("/"):
                skipped.append(SkippedFile(path.rstrip("/"), NESTED_REPO_REASON))
                continue
            if x != "?" and y == " ":
                continue  # staged already (a snapshot taken by changes() or diff())
            reason = None if y == "D" else limit_reason(self.root / path, self.limits)
            if reason is None:
                to_update.append(path)
            else:
                skipped.append(SkippedFile(path, reason))
                if x != "?":
                    to_drop.append(path)  # tracked before, too big now: its old content must not linger
        return to_update, to_drop, skipped

    async def _checkpoint(self, label: str, meta: dict[str, Any]) -> Checkpoint | None:
        head = await self._head()
        tree, skipped = await self._snapshot(head[1] if head else None)
        if head is not None and tree == head[1]:
            return None
        created = datetime.now(UTC)
        label = " ".join(label.split()) or "checkpoint"
        message = commit_message(label, meta, skipped, created)
        parents = ["-p", head[0]] if head else []
        commit = await self._git.text("commit-tree", tree, *parents, input=message.encode("utf-8"))
        self._write_ref(commit)
        self._trees = {commit: tree}
        return Checkpoint(commit, label, created, meta, skipped)

    async def _pair(self, a: Checkpoint | str, b: Checkpoint | str | None) -> tuple[str, str]:
        left = a.id if isinstance(a, Checkpoint) else a
        if b is None:
            right, _ = await self._snapshot()
        else:
            right = b.id if isinstance(b, Checkpoint) else b
        return left, right

    async def _restore(self, target: Checkpoint, only: Sequence[str | Path] | None) -> RestoreResult:
        plan = RestorePlan.for_paths(self.root, only)
        backup = await self._checkpoint(f"before restoring {target.short_id}", {"restore_of": target.id})
        if backup is None:  # nothing changed since the newest checkpoint: that is the state now
            head = await self._head()
            assert head is not None  # target exists, so there is a branch
            out = await self._git.run("log", "-1", f"--format={LOG_FORMAT}", head[0])
            backup = parse_log(out.decode("utf-8", "replace").rstrip("\x1e\n"))
        out = await self._git.run(
            "diff-tree", "-r", "-z", "--no-renames", "--name-status", target.id, backup.id
        )
        plan.decide(target, backup, name_status(out))
        await asyncio.to_thread(remove_files, self.root, plan.to_remove)
        if plan.to_write:
            await self._write_from(target.id, plan.to_write)
        return RestoreResult(
            target, backup, tuple(plan.to_write), tuple(plan.to_remove), tuple(plan.not_restorable)
        )

    async def _write_from(self, commit: str, rel_paths: builtins.list[str]) -> None:
        # A throwaway index keeps the shadow index (the last snapshot) as it is.
        index = self.git_dir / f"restore-{uuid.uuid4().hex}.index"
        env = {"GIT_INDEX_FILE": str(index)}
        try:
            await self._git.run("read-tree", commit, env=env)
            await self._git.run(
                "checkout-index", "-f", "-z", "--stdin", input=encode_paths(rel_paths), env=env
            )
        finally:
            with suppress(FileNotFoundError):
                index.unlink()

    async def gc(self, *, now: bool = False) -> bool:
        """Housekeeping: pack the shadow repository's loose objects once enough have piled up.

        Bounded by ``HOUSEKEEPING``: past ``loose_objects`` loose objects (~30 per action on a big
        tree) they are packed into one new pack (what ``git repack -d -l`` does, ~7× smaller on
        disk). It runs beside checkpoints, without the store's lock, so a checkpoint never waits
        for it: it only adds a pack and then removes loose objects that pack holds (nothing
        unreachable is dropped, no ref is touched, and unlike ``git prune-packed`` no object
        directory is removed, since a checkpoint may be creating a file in it). Past ``packs`` packs, everything is
        packed into one and unreachable loose objects older than ``prune_expire`` are pruned —
        under the store's lock, so no checkpoint can reuse an object meanwhile (rare: every ~20
        packs). Below the thresholds it costs a directory listing and no git process.

        Args:
            now: Pack everything and prune every unreachable object now (``gc --prune=now``).

        Returns:
            Whether anything was packed.
        """
        return await self._housekeeping.run(now=now)

    def loose_objects(self) -> int:
        """The number of loose objects in the shadow repository (what ``gc`` packs)."""
        return self._housekeeping.loose_objects()

    def _pack_count(self) -> int:
        return self._housekeeping.pack_count()


__all__ = [
    "HOUSEKEEPING",  # re-exported: the thresholds were set here before housekeeping had a module
    "Checkpoint",
    "CheckpointError",
    "CheckpointLimits",
    "CheckpointStore",
    "CheckpointsUnavailable",
    "FileChange",
    "RestoreResult",
    "SkippedFile",
]
