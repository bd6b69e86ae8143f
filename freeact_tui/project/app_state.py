"""The app's own state: every folder it reads decisions or code from, and the one predicate over them (#42 F5).

The app decides what runs unasked from files it keeps: the rules (``permissions.json``), the trust store,
the user config and themes (``paths.config_dir``); sessions and their ``meta.json``, checkpoints, the
generated-code manifests the kernel's finder trusts, caches, logs (``paths.data_dir``); the whole
``FREEACT_TUI_HOME`` when it is set; the XDG folders of the platform it would use otherwise; freeact's
user-level ``~/.freeact``; the ``sessions_dir`` the user's config file sets. Code that writes one of them changes every later decision, in every folder and
session (``{"allow": [{"kind": "*", "pattern": "*"}]}`` in ``permissions.json``), so none of it is ever
work inside a working folder, whichever folder that is: the working folder may hold one (``~/.config``),
be one (``~/.config/freeact-tui``) or lie inside one.

``app_state_at(path)`` says whether a path (absolute) is at or below one of these folders, and
``app_state_below(path)`` whether one of them is at or below the path (moving or removing the path moves
or removes it too); both follow every symlink (``reach.resolve.real_path``), the path's and the folders'.
The folders are read afresh on every call: ``FREEACT_TUI_HOME`` and the XDG variables may change.
"""

from __future__ import annotations

import functools
import os
import posixpath
import tomllib
from dataclasses import dataclass
from pathlib import Path

from platformdirs import PlatformDirs

from freeact_tui.project import files, paths
from freeact_tui.reach.resolve import real_path, within

FREEACT_USER_DIR = paths.FREEACT_DIR_NAME
"""freeact's user-level folder in the home (``~/.freeact``): its config and skills."""


@dataclass(frozen=True)
class AppStateDir:
    """One folder of the app's own state: where it really is (symlinks followed) and what it holds."""

    path: str
    what: str


def _dirs() -> list[tuple[Path, str]]:
    home = os.environ.get("FREEACT_TUI_HOME")
    found: list[tuple[Path, str]] = [
        (paths.config_dir(), "this app's own settings (rules, trust, config, themes)"),
        (paths.data_dir(), "this app's own data (sessions, checkpoints, generated code, caches)"),
    ]
    if home:
        found.insert(0, (Path(home).expanduser(), "this app's own settings and data (FREEACT_TUI_HOME)"))
    else:
        platform = PlatformDirs(paths.APP_NAME, appauthor=False)
        found += [
            (Path(platform.user_cache_dir), "this app's own cache"),
            (Path(platform.user_state_dir), "this app's own state"),
            (Path(platform.user_log_dir), "this app's own logs"),
        ]
    found.append((Path.home() / FREEACT_USER_DIR, "freeact's own settings and skills (~/.freeact)"))
    sessions = _configured_sessions_dir(paths.user_config_file())
    if sessions is not None:
        found.append((sessions, "this app's session store (sessions_dir)"))
    return found


def _configured_sessions_dir(config_file: Path) -> Path | None:
    """The ``sessions_dir`` the user's config file sets (where it keeps sessions outside its data folder)."""
    try:
        status = config_file.stat()
    except OSError:
        return None
    return _sessions_dir_of(str(config_file), status.st_mtime_ns, status.st_size)


@functools.lru_cache(maxsize=8)
def _sessions_dir_of(config_file: str, mtime_ns: int, size: int) -> Path | None:
    """``sessions_dir`` of one version of the config file (by its time and size: read once)."""
    del mtime_ns, size  # the cache key: a changed file is read again
    try:
        value = tomllib.loads(files.read_text(Path(config_file))).get("sessions_dir")  # a FIFO or a huge file: not read
    except (OSError, ValueError):
        return None
    return Path(value).expanduser() if isinstance(value, str) and value.strip() else None


def app_state_dirs() -> tuple[AppStateDir, ...]:
    """Every folder of the app's own state, each as it really is (a symlinked folder by its target, too),
    the deepest first (a path is named by the narrowest folder that holds it)."""
    found: dict[str, AppStateDir] = {}
    for directory, what in _dirs():
        lexical = posixpath.abspath(os.fspath(directory))
        for where in (lexical, real_path(lexical).path):
            if where != "/":  # a home of "/" names no folder of the app's own
                found.setdefault(where, AppStateDir(where, what))
    return tuple(sorted(found.values(), key=lambda d: -d.path.count("/")))


def app_state_at(path: str) -> AppStateDir | None:
    """The folder of the app's own state that ``path`` (absolute) is at or below, symlinks followed."""
    full = real_path(posixpath.abspath(path)).path
    return next((d for d in app_state_dirs() if within(full, d.path)), None)


def app_state_below(path: str) -> AppStateDir | None:
    """A folder of the app's own state at or below ``path`` (absolute): moving, removing or changing the
    permissions of ``path`` does as much to it."""
    full = real_path(posixpath.abspath(path)).path
    return next((d for d in app_state_dirs() if within(d.path, full)), None)


def app_state_touched(path: str, *, writes: bool) -> AppStateDir | None:
    """The app's own state a read (at or below) or a write (at, below or above) of ``path`` touches."""
    return app_state_at(path) or (app_state_below(path) if writes else None)


__all__ = ["AppStateDir", "app_state_at", "app_state_below", "app_state_dirs", "app_state_touched"]
