"""What of the working directory every isolation backend (the sandbox, Docker) keeps read-only: the project's names, existing or not,
and the app's own code when it lives there.

A name a file system may take for a protected one (``.GIT``, ``AGENTS.MD``: ``paths.is_protected``, the one
name comparison) that exists is bound read-only too.

bubblewrap binds the working directory writable; a name inside it stays read-only only if something
is mounted on it. A name that exists is bound onto itself. A missing one gets a placeholder (an empty
read-only directory from a private directory outside the folder) mounted where it would be: code in
the sandbox can then neither create it (``os.makedirs('.git')``, ``open('.env', 'w')``) nor put a
directory or file there by renaming a sibling or through a symlink (the mount point is busy and
read-only). bubblewrap creates the mount point in the folder, so the host sees an empty directory of
that name while the sandbox runs — a directory even for a file's name, because git shows no empty
directory and the app reads its project files only when they are files (``is_file()``), so it is no
project file and no untracked change — except for ``.freeact``: an empty ``.freeact`` directory
would make the folder a freeact project to the host (its sessions, rules and generated tools would
move there), so its placeholder is an empty file. ``cleanup()`` removes each placeholder it made that
is still empty when the sandbox stops.

The app's interpreter, ``sys.path`` and package directories inside the folder (an app run from its
own checkout) are bound read-only too: nothing the sandbox can write is imported on the host later. So
are the folders of the app's own state inside the folder (``app_state_paths``: a folder such as
``~/.config`` holds the app's rules): the sandbox's writes never change what the app decides.

Secret files (``secret_files``: ``.env``, ``*.pem``, ``.ssh/``, … by the permission rules' one table)
get an empty placeholder of their own type bound over them, last, so that the isolated kernel holds
none: ``.env`` is then neither readable nor writable.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from freeact_tui.execution.isolation.secret_files import secret_targets
from freeact_tui.project.app_state import app_state_dirs
from freeact_tui.project.paths import FREEACT_DIR_NAME, PROTECTED_NAMES, is_protected

_PACKAGE_DIR = Path(__file__).resolve().parents[2]
EndNow = Callable[[], Callable[[float], bool]]
"""A backend's way to end its isolated processes at once (no grace): it returns a wait that takes the
seconds left and tells whether they ended."""

_LIVE: set[ProtectedNames] = set()
"""Every table whose placeholders may be in a folder now (made, not yet cleaned up)."""

_FILE_PLACEHOLDERS = frozenset({FREEACT_DIR_NAME})
"""Names whose placeholder is an empty file (see the module docstring); the others get an empty directory."""


class ProtectedNames:
    """The read-only binds for one sandbox of ``working_dir`` (``options()``), and their cleanup."""

    def __init__(self, working_dir: Path) -> None:
        self.working_dir = working_dir
        self._source = Path(tempfile.mkdtemp(prefix="freeact-sbx-protect-"))
        (self._source / "dir").mkdir(mode=0o555)
        (self._source / "file").touch(mode=0o444)
        self.placeholders: list[Path] = []
        """The names that did not exist: bubblewrap made their mount points in the folder."""
        self._made: set[Path] = set()
        self._outside: list[Path] = []
        """Secret files outside the folder (hidden by the sandbox; Docker sees nothing outside it)."""
        self.end_now: EndNow | None = None
        """Set by the backend once its processes run (see ``end_all_now``)."""
        _LIVE.add(self)

    def binds(self) -> list[tuple[Path, Path]]:
        """Every read-only bind as ``(source, target)``: the one table each isolation backend applies
        (bubblewrap's ``--ro-bind``, Docker's ``--volume SRC:DST:ro``)."""
        binds: list[tuple[Path, Path]] = []
        for name in PROTECTED_NAMES:
            path = self.working_dir / name
            if path.is_symlink():
                continue  # a mount would land on its target; the trust digest sees a changed link
            if path.exists() and path not in self._made:
                binds.append((path, path))
            else:
                form = "file" if name in _FILE_PLACEHOLDERS else "dir"
                binds.append((self._source / form, path))
                self._made.add(path)
        binds += [(path, path) for path in protected_variants(self.working_dir)]
        binds += [(path, path) for path in app_code_paths(self.working_dir)]
        binds += [(path, path) for path in app_state_paths(self.working_dir)]
        self.placeholders = sorted(self._made)
        inside, self._outside = secret_targets(self.working_dir)
        return one_per_target(binds + [self._hidden(path) for path in inside])  # last: over the names above

    def _hidden(self, path: Path) -> tuple[Path, Path]:
        """An empty placeholder of ``path``'s type bound over it (a secret file the sandbox must not hold)."""
        return (self._source / ("dir" if path.is_dir() else "file"), path)

    def options(self) -> list[str]:
        """bubblewrap's options, after the working directory's own ``--bind``: the read-only names, the
        secrets of the folder and those outside it (``secret_files``) hidden."""
        binds = one_per_target(self.binds() + [self._hidden(path) for path in self._outside])
        return [word for source, target in binds for word in ("--ro-bind", str(source), str(target))]

    def docker_options(self) -> list[str]:
        """Docker's options, after the working directory's own ``--volume``."""
        return [word for source, target in self.binds() for word in ("--volume", f"{source}:{target}:ro")]

    def cleanup(self) -> None:
        """Remove the mount points bubblewrap made that are still empty, then the placeholders."""
        for path in self.placeholders:
            with contextlib.suppress(OSError):
                if path.is_symlink():
                    continue
                if path.is_dir():
                    path.rmdir()  # only if empty
                elif path.is_file() and path.stat().st_size == 0:
                    path.unlink()
        self._made.clear()
        self.end_now = None
        _LIVE.discard(self)
        with contextlib.suppress(OSError):
            (self._source / "dir").chmod(0o755)
        shutil.rmtree(self._source, ignore_errors=True)


def end_all_now(limit: float = 5.0) -> None:
    """Before the process ends without stopping its kernels (a fast exit): end every isolated kernel at
    once and remove the placeholders it made in its folder — left to their watchdogs, the kernels
    would end after us and the folder would keep an empty ``.git/``, ``.env/``, ``AGENTS.md/``, … A
    placeholder is removed only once the processes that could write through its place have ended; one
    whose kernel does not end within ``limit`` seconds stays (the folder is never opened to a live
    sandbox)."""
    waits: list[tuple[ProtectedNames, Callable[[float], bool]]] = []
    for protected in list(_LIVE):
        if protected.end_now is None:
            protected.cleanup()  # nothing was started on its binds
            continue
        with contextlib.suppress(Exception):
            waits.append((protected, protected.end_now()))
    deadline = time.monotonic() + limit
    for protected, ended in waits:
        with contextlib.suppress(Exception):
            if ended(max(0.0, deadline - time.monotonic())):
                protected.cleanup()


def one_per_target(binds: list[tuple[Path, Path]]) -> list[tuple[Path, Path]]:
    """``binds`` with each target once, where its last bind stands (bubblewrap mounts a later bind over an
    earlier one; Docker refuses a second mount on one target — "Duplicate mount point" — so the table
    says it once for both). A name can come twice: ``.env`` is a protected name and a secret file, and a
    placeholder another kernel of the same folder made is an existing name to the next one."""
    last = {target: index for index, (_, target) in enumerate(binds)}
    return [bind for index, bind in enumerate(binds) if last[bind[1]] == index]


def protected_variants(working_dir: Path) -> list[Path]:
    """The entries of ``working_dir`` whose name a file system may take for a protected name though it is not
    spelled as one (``.GIT``, ``Agents.MD``, ``.env.``: ``paths.is_protected``), bound read-only as they
    are; a symlink is left out (a mount would land on its target)."""
    try:
        names = sorted(os.listdir(working_dir))
    except OSError:
        return []
    return [
        working_dir / name
        for name in names
        if name not in PROTECTED_NAMES and is_protected(name) and not (working_dir / name).is_symlink()
    ]


def app_code_paths(working_dir: Path) -> list[Path]:
    """The app's interpreter prefixes, ``sys.path`` entries and package directory that lie inside
    ``working_dir`` (not the folder itself), outermost only."""
    root = working_dir.resolve()
    names = [sys.prefix, sys.exec_prefix, str(_PACKAGE_DIR), *sys.path]
    found: set[Path] = set()
    for name in filter(None, names):
        path = Path(name).resolve()
        if path != root and path.is_relative_to(root) and path.exists():
            found.add(path)
    return sorted(p for p in found if not any(p != q and p.is_relative_to(q) for q in found))


def app_state_paths(working_dir: Path) -> list[Path]:
    """The folders of the app's own state (``project.app_state``: its rules, trust, sessions, the kernel's
    environment) that lie inside ``working_dir`` (``~/.config`` holds ``~/.config/freeact-tui``): bound
    read-only over the folder's writable bind, so no code in the sandbox changes what the app decides."""
    root = working_dir.resolve()
    found = {
        path
        for d in app_state_dirs()
        if (path := Path(d.path)) != root and path.is_relative_to(root) and path.is_dir() and not path.is_symlink()
    }
    return sorted(p for p in found if not any(p != q and p.is_relative_to(q) for q in found))


__all__ = [
    "EndNow",
    "ProtectedNames",
    "app_code_paths",
    "app_state_paths",
    "end_all_now",
    "one_per_target",
    "protected_variants",
]
