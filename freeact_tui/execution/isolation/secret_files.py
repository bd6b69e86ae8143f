"""The secret files an isolated kernel must not see: found by the one secret table, hidden by an empty bind.

In the ``sandboxed-auto`` mode code runs unasked and its output goes to the model's provider, so what
keeps a secret in is that the sandbox holds none. The secret names are those the permission rules ask
for anywhere (``shell.gitreads.SECRET_NAMES``: ``.env``, ``.env.*``, ``*.pem``, ``*.key``, ``.ssh/``,
``.aws/``, ``.netrc``, histories, …), judged one name at a time (``is_secret_entry``: every path
``is_secret_name`` calls secret is hidden, a test checks it); the homes are absent from the
sandbox (it sees only its table of the host, ``sandbox.SYSTEM_DIRS``), so ``~/.ssh`` and cloud credentials
are not there at all. What
is left are the secret files of the folder and of the folders above it (a monorepo's ``.env``):

- ``folder_secrets``: every secret-named file or folder in the working directory (walked, symlinks not
  followed, a secret folder not entered, at most ``WALK_LIMIT`` entries);
- the secret-named entries directly in each folder above it;
- the folder's whole ``.git`` when its history holds a secret-named file (``history_holds_secrets``): a
  secret committed once is read back through git or the object store as the working tree's would be.
  The trade-off: git does not work inside the sandbox for such a repository (a history without one
  keeps ``.git`` read-only and git working);
- the sessions a freeact project keeps in its ``.freeact/sessions`` (past conversations and tool
  results; the app's own data dir is absent from the sandbox).

``secret_targets`` says where each leads (a symlink is hidden where it points, a dangling one cannot be
read): an empty placeholder of the same type is bound over each, inside the folder by
``protect.ProtectedNames`` (so Docker hides the same ones), outside it by the sandbox alone (where
the sandbox binds a host path that holds one; Docker sees nothing outside the folder).

A secret file the user creates in the folder while the sandbox runs is not hidden (the binds are made at
start); a new sandbox (``/restart``) hides it.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

from freeact_tui.filenames import fold, fold_path
from freeact_tui.gitrun import repo_paths_matching
from freeact_tui.project import paths
from freeact_tui.project.trust import SESSIONS_DIR
from freeact_tui.shell.gitreads import SECRET_NAMES, is_secret_name

WALK_LIMIT = 200_000
"""Entries of the working directory looked at for secret names; a larger tree is hidden as far as walked."""


def _pattern(globs: list[str]) -> re.Pattern[str]:
    return re.compile("|".join(fnmatch.translate(fold_path(g)) for g in globs) or "(?!)", re.IGNORECASE)


# The secret table by the shape of its rows, so that one name is judged at a time as the walk goes down
# (``is_secret_name`` on every path of a large tree takes minutes): a file or folder by its name
# (``*.pem``), a folder all of whose contents are secret (``.ssh/**``), a name in a folder (``.kube/config``).
_NAMES = _pattern([g for g in SECRET_NAMES if "/" not in g])
_WHOLE = [g[: -len("/**")] for g in SECRET_NAMES if g.endswith("/**")]
_FOLDERS = _pattern([g for g in _WHOLE if "/" not in g])
_IN_FOLDER = [
    (_pattern([parent]), _pattern([name]))
    for parent, _, name in (g.partition("/") for g in SECRET_NAMES if "/" in g and not g.endswith("/**"))
]
_FOLDERS_IN_FOLDER = [(_pattern([parent]), _pattern([name])) for parent, _, name in (g.partition("/") for g in _WHOLE if "/" in g)]
"""A secret folder named in its folder (``.config/gcloud/**``): the folder is hidden whole."""


def is_secret_entry(name: str, is_dir: bool, parent: str = "") -> bool:
    """Whether the entry ``name`` (a folder when ``is_dir``) in the folder named ``parent`` is secret by
    the table (any case): as ``is_secret_name`` of its path, one name at a time, each compared as a file
    system may compare it (``filenames.fold``)."""
    name, parent = fold(name), fold(parent)
    if _NAMES.fullmatch(name) or (is_dir and _FOLDERS.fullmatch(name)):
        return True
    pairs = [*_IN_FOLDER, *(_FOLDERS_IN_FOLDER if is_dir else [])]
    return any(p.fullmatch(parent) and n.fullmatch(name) for p, n in pairs)


def folder_secrets(working_dir: Path, limit: int = WALK_LIMIT) -> list[Path]:
    """The secret-named entries inside ``working_dir`` (outermost only; a symlink is an entry, not
    followed), sorted."""
    found: list[Path] = []
    seen = 0
    for top, dirs, files in os.walk(working_dir):
        parent = "" if os.path.samefile(top, working_dir) else os.path.basename(top)
        hidden: set[str] = set()
        for name, is_dir in [*((d, True) for d in dirs), *((f, False) for f in files)]:
            seen += 1
            if seen > limit:
                return sorted(found)
            if is_secret_entry(name, is_dir, parent):
                found.append(Path(top) / name)
                hidden.add(name)
        dirs[:] = [d for d in dirs if d not in hidden]
    return sorted(found)


def _real(path: Path) -> Path | None:
    """Where ``path`` is, through its symlinks (``None``: it leads nowhere)."""
    real = path.resolve()
    return real if real.exists() else None


def history_holds_secrets(working_dir: Path) -> bool:
    """The repository's store (any commit of any ref, the reflog, stashes, the index) holds a file the
    secret table names (``git show HEAD~3:.env`` reads it though the working tree has none), or git
    cannot tell in time: its whole git folder is then a secret store of the folder."""
    found = repo_paths_matching(working_dir, is_secret_name)
    return found is None or bool(found)


def secret_targets(working_dir: Path) -> tuple[list[Path], list[Path]]:
    """What to hide, as real paths: inside the folder (its secret entries, and where its secret symlinks
    lead inside it), and outside it (where its secret symlinks lead outside it, and the secret-named
    entries directly in each folder above it)."""
    root = working_dir.resolve()
    inside: set[Path] = set()
    outside: set[Path] = set()
    for entry in folder_secrets(working_dir):
        real = _real(entry)
        if real is not None:
            (inside if real.is_relative_to(root) else outside).add(real)
    git_dir = working_dir / ".git"
    if git_dir.is_dir() and not git_dir.is_symlink() and history_holds_secrets(working_dir):
        inside.add(git_dir.resolve())
    project = paths.find_freeact_project(working_dir)
    if project is not None:
        # a freeact project keeps this app's sessions (past conversations, tool results) in its folder
        sessions = (project / paths.FREEACT_DIR_NAME / SESSIONS_DIR).resolve()
        if sessions.is_dir():
            (inside if sessions.is_relative_to(root) else outside).add(sessions)
    for parent in root.parents:
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            path = parent / name
            if not root.is_relative_to(path) and is_secret_entry(name, path.is_dir()) and (real := _real(path)):
                (inside if real.is_relative_to(root) else outside).add(real)
    return _outermost(inside), _outermost(outside)


def _outermost(found: set[Path]) -> list[Path]:
    """Each hidden path once: one inside another hidden one is covered by it (and could not be bound:
    its mount point would be in the empty read-only placeholder)."""
    return sorted(p for p in found if not any(p != q and p.is_relative_to(q) for q in found))


__all__ = ["WALK_LIMIT", "folder_secrets", "history_holds_secrets", "is_secret_entry", "secret_targets"]
