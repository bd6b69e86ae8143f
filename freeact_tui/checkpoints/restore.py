"""What a restore does, decided before anything is touched: files to write back, files to remove,
and files it must leave as they are (never stored, outside the root, or too big to back up now)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from freeact_tui.checkpoints.limits import SkippedFile
from freeact_tui.checkpoints.records import Checkpoint

OUTSIDE_REASON = "outside the working directory (not covered)"


def relative_to_root(root: Path, path: str | Path) -> str | None:
    """``path`` (absolute, or relative to ``root``) as a ``/``-separated path in ``root``; None outside."""
    target = Path(path).expanduser()
    target = Path(os.path.normpath(target if target.is_absolute() else root / target))
    if target != root and root not in target.parents:
        return None
    return target.relative_to(root).as_posix()


@dataclass
class RestorePlan:
    """The files a restore writes back from the checkpoint, removes, and leaves as they are."""

    wanted: list[str] | None = None  # None: everything
    to_write: list[str] = field(default_factory=list)
    to_remove: list[str] = field(default_factory=list)
    not_restorable: list[SkippedFile] = field(default_factory=list)

    @classmethod
    def for_paths(cls, root: Path, only: Sequence[str | Path] | None) -> RestorePlan:
        plan = cls()
        if only is not None:
            plan.wanted = []
            for item in only:
                rel = relative_to_root(root, item)
                if rel is None:
                    plan.not_restorable.append(SkippedFile(str(item), OUTSIDE_REASON))
                else:
                    plan.wanted.append(rel)
        return plan

    def selected(self, path: str) -> bool:
        if self.wanted is None:
            return True
        return any(w in (".", "") or path == w or path.startswith(w.rstrip("/") + "/") for w in self.wanted)

    def decide(self, target: Checkpoint, backup: Checkpoint, changes: list[tuple[str, str]]) -> None:
        """Sort the (status, path) changes from ``target`` to ``backup`` (the state now)."""
        too_big_now = {s.path: s.reason for s in backup.skipped}
        for code, path in changes:
            if not self.selected(path):
                continue
            if code == "A":
                self.to_remove.append(path)  # created after the checkpoint
            elif path in too_big_now:  # overwriting it would lose a version no checkpoint holds
                reason = f"left as is: its current version is {too_big_now[path]}, so a restore could not be undone"
                self.not_restorable.append(SkippedFile(path, reason))
            else:
                self.to_write.append(path)
        for s in target.skipped:
            if self.selected(s.path):
                self.not_restorable.append(SkippedFile(s.path, f"not in the checkpoint: {s.reason}"))
        named = {n.path for n in self.not_restorable}
        for s in backup.skipped:
            if self.selected(s.path) and s.path not in named:
                self.not_restorable.append(SkippedFile(s.path, f"left as is: {s.reason}, never checkpointed"))


def remove_files(root: Path, rel_paths: list[str]) -> None:
    """Remove files created after a checkpoint, and the directories they leave empty."""
    real_root = os.path.realpath(root)
    for rel in rel_paths:
        path = root / rel
        parent_real = os.path.realpath(path.parent)
        if parent_real != real_root and not parent_real.startswith(real_root + os.sep):
            continue  # a directory on the way became a symlink out of the root: never follow it
        with suppress(FileNotFoundError):
            path.unlink()
        parent = path.parent
        while parent != root and root in parent.parents:
            try:
                parent.rmdir()  # only empty directories go, like git's own checkout
            except OSError:
                break
            parent = parent.parent
