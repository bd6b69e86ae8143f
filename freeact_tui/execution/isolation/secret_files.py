"""The secret files an isolated kernel must not see: found by the one secret table, hidden by an empty bind.

In the ``sandboxed-auto`` mode code runs unasked and its output goes to the model's provider, so what
keeps a secret in is that the sandbox holds none. The secret names are those the permission rules ask
for anywhere (``shell.gitreads.SECRET_NAMES``, through ``is_secret_name``: ``.env``, ``.env.*``,
``*.pem``, ``*.key``, ``.ssh/``, ``.aws/``, ``.netrc``, histories, …); the home directory is the
sandbox's own (``sandbox.hidden_dirs``), so ``~/.ssh`` and cloud credentials are not there at all. What
is left are the secret files of the folder and of the folders above it (a monorepo's ``.env``):

- ``folder_secrets``: every secret-named file or folder in the working directory (walked, symlinks not
  followed, at most ``WALK_LIMIT`` entries);
- the secret-named entries directly in each folder above it.

``secret_targets`` says where each leads (a symlink is hidden where it points, a dangling one cannot be
read): an empty placeholder of the same type is bound over each, inside the folder by
``protect.ProtectedNames`` (so Docker hides the same ones), outside it by the sandbox alone (the host is
read-only there and these exist, so the bind lands on them; Docker sees nothing outside the folder).

A secret file the user creates in the folder while the sandbox runs is not hidden (the binds are made at
start); a new sandbox (``/restart``) hides it.
"""

from __future__ import annotations

import os
from pathlib import Path

from freeact_tui.shell.gitreads import is_secret_name

WALK_LIMIT = 200_000
"""Entries of the working directory looked at for secret names; a larger tree is hidden as far as walked."""


def _is_secret(relative: str, is_dir: bool) -> bool:
    """A file by its name; a folder by its name or because all it holds is secret (``.ssh/**``)."""
    names = [relative, relative + "/x"] if is_dir else [relative]
    return any(is_secret_name(n) or is_secret_name(n.lower()) for n in names)


def folder_secrets(working_dir: Path, limit: int = WALK_LIMIT) -> list[Path]:
    """The secret-named entries inside ``working_dir`` (outermost only; a symlink is an entry, not
    followed), sorted."""
    found: list[Path] = []
    seen = 0
    for top, dirs, files in os.walk(working_dir):
        rel_top = os.path.relpath(top, working_dir)
        for name in sorted(dirs) + sorted(files):
            seen += 1
            if seen > limit:
                return sorted(found)
            rel = name if rel_top == "." else os.path.join(rel_top, name)
            if _is_secret(rel, name in dirs):
                found.append(working_dir / rel)
        dirs[:] = [d for d in dirs if working_dir / rel_top / d not in found]
    return sorted(found)


def _real(path: Path) -> Path | None:
    """Where ``path`` is, through its symlinks (``None``: it leads nowhere)."""
    real = path.resolve()
    return real if real.exists() else None


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
    for parent in root.parents:
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            path = parent / name
            if not root.is_relative_to(path) and _is_secret(name, path.is_dir()) and (real := _real(path)):
                (inside if real.is_relative_to(root) else outside).add(real)
    return sorted(inside), sorted(outside)


__all__ = ["WALK_LIMIT", "folder_secrets", "secret_targets"]
