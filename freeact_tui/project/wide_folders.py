"""Folders too wide to bound "inside this folder": by their structure, not by a list of names (#42 F9).

"In-folder" work is bounded by the working folder; a folder that is the system's, or shared with every
user, bounds nothing: ``run`` in ``/var/tmp`` with the in-folder mode wrote ``/var/tmp/marker`` unasked,
and an "always allow in-folder code" rule saved there reaches every user's files. A folder is too wide
(``why_too_wide``) when it is:

- the root of the disk, or a folder of the file system's own layout (the Filesystem Hierarchy Standard's
  top-level folders: ``/tmp``, ``/mnt``, ``/opt``, ``/srv`` …), or inside one of its system trees
  (``/etc/**``, ``/usr/**``, ``/var/**``, ``/run/**`` …) — unless it is a project inside a shared temp root
  (``/var/tmp/proj``);
- writable by every user (``/tmp``, ``/var/tmp``, ``/dev/shm``, any ``chmod 1777`` folder): shared, not
  a project;
- not owned by the user who runs the app (``/usr/local``, ``/media/user``), where that user is not root;
- a folder that holds the user's home;
- a folder of the app's own state, or one inside it (``project.app_state``: ``~/.config/freeact-tui``): its
  rules, trust and sessions are never work inside a folder. A folder that holds one (``~/.config``) is a
  folder, with the app's state carved out of it path by path (``effects.reader``).

A project folder inside ``/tmp`` or ``/home/user`` is none of these.
"""

from __future__ import annotations

import os
import stat

from freeact_tui.project.app_state import app_state_at

FHS_TOP = frozenset(
    "bin boot dev etc home lib lib32 lib64 libx32 media mnt opt proc root run sbin srv sys tmp usr var".split()
)
"""The top-level folders of the Filesystem Hierarchy Standard (3.0): the system's own layout."""
SYSTEM_TREES = frozenset("bin boot dev etc lib lib32 lib64 libx32 proc run sbin sys usr var".split())
"""Top-level folders whose whole tree is the system's (``/home``, ``/tmp``, ``/mnt``, ``/media``, ``/srv``,
``/opt`` hold users' and projects' folders below them)."""


def _shared(path: str) -> bool:
    """Writable by every user (``/tmp``: world-writable, usually sticky)."""
    try:
        return bool(os.stat(path).st_mode & stat.S_IWOTH)
    except OSError:
        return False


def _owner(path: str) -> int | None:
    try:
        return os.stat(path).st_uid
    except OSError:
        return None


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def why_too_wide(root: str, *, uid: int | None = None, home: str | None = None) -> str | None:
    """Why the real folder ``root`` bounds no in-folder work (``None``: it is a project folder).

    Args:
        root: the working folder, absolute and real (symlinks followed).
        uid: the user the app runs as (default: this process's).
        home: the user's home, real (default: ``~``).
    """
    uid = os.getuid() if uid is None else uid
    home = os.path.realpath(os.path.expanduser("~")) if home is None else home
    parts = [p for p in root.split("/") if p]
    if not parts:
        return "the root of the disk"
    if len(parts) == 1 and parts[0] in FHS_TOP:
        return "a folder of the system's own layout"
    if _shared(root):
        return "a folder every user may write to"
    if _within(home, root):
        return "a folder that holds the home folder"
    if (own := app_state_at(root)) is not None:
        return f"a folder of {own.what}"
    if parts[0] in SYSTEM_TREES:
        below_shared = any(_shared("/" + "/".join(parts[:k])) for k in range(2, len(parts)))
        if not below_shared:
            return "a folder of the system's own"
    owner = _owner(root)
    if uid != 0 and owner is not None and owner != uid:
        return "a folder another user owns"
    return None


__all__ = ["FHS_TOP", "SYSTEM_TREES", "why_too_wide"]
