"""What of the working directory every isolation backend (the sandbox, Docker) keeps read-only: the project's names, existing or not,
and the app's own code when it lives there.

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
own checkout) are bound read-only too: nothing the sandbox can write is imported on the host later.

Secret files (``secret_files``: ``.env``, ``*.pem``, ``.ssh/``, … by the permission rules' one table)
get an empty placeholder of their own type bound over them, last, so that the isolated kernel holds
none: ``.env`` is then neither readable nor writable.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import tempfile
from pathlib import Path

from freeact_tui.execution.isolation.secret_files import secret_targets
from freeact_tui.project.paths import FREEACT_DIR_NAME, PROTECTED_NAMES

_PACKAGE_DIR = Path(__file__).resolve().parents[2]
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
        binds += [(path, path) for path in app_code_paths(self.working_dir)]
        self.placeholders = sorted(self._made)
        inside, self._outside = secret_targets(self.working_dir)
        return binds + [self._hidden(path) for path in inside]  # last: over the names bound above

    def _hidden(self, path: Path) -> tuple[Path, Path]:
        """An empty placeholder of ``path``'s type bound over it (a secret file the sandbox must not hold)."""
        return (self._source / ("dir" if path.is_dir() else "file"), path)

    def options(self) -> list[str]:
        """bubblewrap's options, after the working directory's own ``--bind``: the read-only names, the
        secrets of the folder and those outside it (``secret_files``) hidden."""
        binds = self.binds() + [self._hidden(path) for path in self._outside]
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
        with contextlib.suppress(OSError):
            (self._source / "dir").chmod(0o755)
        shutil.rmtree(self._source, ignore_errors=True)


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


__all__ = ["ProtectedNames", "app_code_paths"]
