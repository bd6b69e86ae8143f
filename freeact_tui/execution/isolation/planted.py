"""Code-configuring names a sandboxed action wrote at any depth of the folder, found and undone (#39, F5).

The sandbox binds its protected names read-only at the top of the working folder, but it cannot bind
names that do not exist yet at depths it cannot know: sandboxed code can ``git init sub`` and set
``core.fsmonitor`` in ``sub/.git/config``, or write ``sub/.gitattributes``, ``sub/.envrc``,
``sub/.vscode/settings.json``, ``sub/.mcp.json``, ``evil.pth`` — programs the user's next ``git``,
shell or editor runs on the host. So ``PlantGuard`` records, before each sandboxed action, every path
of the folder one of whose parts configures code (``paths.configures_part``: ``PROTECTED_NAMES``,
``CONFIGURES_CODE``, any hidden name but the inert ones — ``.cargo/config.toml``, ``.hg/hgrc``, ``.mise.toml``
— or a ``.pth``), with the bytes of each small file; after the action it
compares, and puts back what the action created, changed or removed there (a new ``sub/.git`` is
removed whole). What it undid is told (``PlantGuard.finish``). A folder too large to walk in its bound
is said to be unchecked, never taken as clean.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from freeact_tui.filenames import fold
from freeact_tui.project.paths import PROTECTED_NAMES, controlling_part

MAX_ENTRIES = 100_000
"""Entries a walk of the folder looks at (more: the folder is said to be unchecked)."""
MAX_FILE_BYTES = 1 << 20
"""Bytes of one recorded file kept to put it back (a larger one changed is named, not restored)."""
# Inside a git dir: what holds no program (objects, refs, logs) is not walked.
_GIT_DATA = frozenset({"objects", "refs", "logs", "lfs"})


# In a git dir, the files that name programs (the rest is the repository's data: index, HEAD, refs).
_GIT_PROGRAMS = ("config", "config.worktree", "hooks", "info", "commondir", "gitdir")
_GIT_DIR = ".git"


def configures(rel: str) -> bool:
    """A path (relative, ``/``-separated) at or below a name that configures code run later, each name
    compared as a file system may compare it (``filenames.fold``: ``sub/.GIT/config``, ``X.PTH``). The
    top-level ``PROTECTED_NAMES`` are not, spelled exactly: the sandbox binds them read-only itself, and the
    app writes its own state there (``.freeact/sessions``); a variant of one (``.GIT``) is guarded here."""
    parts = rel.split("/")
    if parts[0] in PROTECTED_NAMES:
        return False
    keys = [fold(part) for part in parts]
    if _GIT_DIR in keys[:-1]:
        below = keys[keys.index(_GIT_DIR) + 1 :]
        return any(part in _GIT_PROGRAMS for part in below)  # ``modules/<name>/config`` too
    return keys[-1].endswith(".pth") or controlling_part(parts) is not None


@dataclass(frozen=True)
class _Entry:
    kind: str  # "file", "dir", "link", "other"
    key: tuple[int, ...]  # what a change changes (a directory: only what it is)
    data: bytes | None = None  # a file's bytes (up to MAX_FILE_BYTES), a link's target


def _entry(path: str, info: os.stat_result) -> _Entry:
    if stat.S_ISDIR(info.st_mode):
        return _Entry("dir", (info.st_mode, info.st_ino))
    key = (info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    if stat.S_ISLNK(info.st_mode):
        return _Entry("link", key, os.fsencode(os.readlink(path)))
    if stat.S_ISREG(info.st_mode) and info.st_size <= MAX_FILE_BYTES:
        try:
            with open(path, "rb") as fh:
                return _Entry("file", key, fh.read(MAX_FILE_BYTES + 1))
        except OSError:
            return _Entry("file", key)
    return _Entry("file" if stat.S_ISREG(info.st_mode) else "other", key)


def snapshot(root: Path) -> dict[str, _Entry] | None:
    """Every path below ``root`` that ``configures``, as it is now; ``None`` past ``MAX_ENTRIES``."""
    found: dict[str, _Entry] = {}
    seen = 0
    base = str(root)
    for top, dirs, files in os.walk(base, followlinks=False):
        seen += len(dirs) + len(files)
        if seen > MAX_ENTRIES:
            return None
        rel_top = os.path.relpath(top, base).replace(os.sep, "/")
        if rel_top.split("/")[0] in PROTECTED_NAMES:
            dirs[:] = []  # the sandbox's own read-only names, and the app's state
            continue
        if _GIT_DIR in [fold(part) for part in rel_top.split("/")]:
            dirs[:] = [d for d in dirs if d not in _GIT_DATA]
        for name in [*dirs, *files]:
            rel = name if rel_top == "." else f"{rel_top}/{name}"
            if configures(rel):
                path = os.path.join(top, name)
                try:
                    found[rel] = _entry(path, os.lstat(path))
                except OSError:
                    continue
    return found


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        os.unlink(path)


def _plain_path(root: Path, rel: str) -> str:
    """``root/rel``, when no folder on the way is a symlink (the action may have swapped one in: nothing is
    removed or written through it, out of the folder); else ``OSError``."""
    base = os.path.realpath(root)
    parent = os.path.dirname(rel)
    where = os.path.join(base, parent) if parent else base
    if os.path.realpath(where) != os.path.normpath(where):
        raise OSError(f"{parent} is a symlink now")
    return os.path.join(base, rel)


def _put_back(path: str, entry: _Entry) -> bool:
    """Write ``entry`` at ``path`` again; ``False`` when its bytes were not kept."""
    if entry.kind == "dir":
        if os.path.lexists(path) and not (os.path.isdir(path) and not os.path.islink(path)):
            _remove(path)
        os.makedirs(path, exist_ok=True)
        return True
    if entry.data is None or entry.kind not in ("file", "link"):
        return False
    if os.path.lexists(path):
        _remove(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if entry.kind == "link":
        os.symlink(os.fsdecode(entry.data), path)
        return True
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, stat.S_IMODE(entry.key[0]))
    with os.fdopen(fd, "wb") as fh:
        fh.write(entry.data)
    return True


def revert(root: Path, before: dict[str, _Entry], after: dict[str, _Entry]) -> tuple[list[str], list[str]]:
    """Put the paths of ``after`` back as ``before`` had them: what is new is removed, what changed or
    went is written again. Returns (undone, not undone)."""
    undone: list[str] = []
    kept: list[str] = []
    new = sorted(rel for rel in after if rel not in before)
    gone_parents: list[str] = []
    for rel in new:  # a new directory goes whole, with what it holds
        if any(rel.startswith(p + "/") for p in gone_parents):
            continue
        try:
            _remove(_plain_path(root, rel))
            undone.append(rel)
            gone_parents.append(rel)
        except OSError:
            kept.append(rel)
    for rel in sorted(before):
        was, now = before[rel], after.get(rel)
        if now is not None and now.kind == was.kind and now.key == was.key:
            continue
        if now is not None and was.kind == "dir" and now.kind == "dir":
            continue
        try:
            (undone if _put_back(_plain_path(root, rel), was) else kept).append(rel)
        except OSError:
            kept.append(rel)
    return undone, kept


class PlantGuard:
    """One sandboxed action's watch over the names that configure code: ``start`` before it runs,
    ``finish`` after (both walk the folder: run them off the event loop)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.before = snapshot(root)

    def finish(self) -> str | None:
        """Undo what the action did to those names; the notice saying so, or ``None`` if it did nothing."""
        if self.before is None:
            return (
                f"The folder has more than {MAX_ENTRIES:,} entries: what this sandboxed action wrote to names "
                "that configure git, editors or this app (at any depth) was not checked."
            )
        after = snapshot(self.root)
        if after is None:
            return "What this sandboxed action wrote to names that configure git, editors or this app was not checked."
        undone, kept = revert(self.root, self.before, after)
        if not undone and not kept:
            return None
        parts = []
        if undone:
            parts.append(f"undone: {', '.join(undone)}")
        if kept:
            parts.append(f"NOT undone (check them yourself): {', '.join(kept)}")
        return (
            "The sandboxed action wrote names that configure git, editors, tools or this app (programs they "
            f"would run on the host later); {'; '.join(parts)}. To write them, approve the action outside the "
            "sandbox."
        )


__all__ = ["MAX_ENTRIES", "PlantGuard", "configures", "revert", "snapshot"]
