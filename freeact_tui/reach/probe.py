"""The one safe probe of a path someone else chose (the model, a stored session, a user's ``@mention``).

Such a path may be anything: a component longer than ``NAME_MAX`` (``ENAMETOOLONG``), a loop of links
(``ELOOP``), a folder that cannot be searched (``EACCES``), a NUL byte or a lone surrogate (``ValueError``),
``~nosuchuser/…`` (``RuntimeError`` from ``expanduser``). ``pathlib`` answers some of these with ``False``
and raises on the others, depending on the Python version. Code that only *shows* or *describes* a path
(a tool call's view, a replay, a mention) asks here and gets a value, never an exception: a path that
cannot be probed does not exist, is not a file, has no stat, and expands and resolves to itself as written.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PROBE_ERRORS: tuple[type[BaseException], ...] = (OSError, ValueError, RuntimeError, KeyError)
"""What probing a path can raise: the system's refusals, a NUL byte or an unencodable character, a
``~user`` with no such user (``RuntimeError``; ``KeyError`` from ``pwd`` on some versions)."""


def expanded(path: str | Path) -> Path:
    """``path`` with a leading ``~``/``~user`` expanded where it can be, else as written."""
    try:
        return Path(path).expanduser()
    except PROBE_ERRORS:
        return Path(path)


def stat_of(path: str | Path, *, follow: bool = True) -> os.stat_result | None:
    """The stat of ``path`` (links followed unless ``follow`` is false), or ``None`` when it cannot be had."""
    try:
        return os.stat(path, follow_symlinks=follow)
    except PROBE_ERRORS:
        return None


def exists(path: str | Path) -> bool:
    """Whether ``path`` (links followed) can be reached."""
    return stat_of(path) is not None


def is_file(path: str | Path) -> bool:
    """Whether ``path`` (links followed) is a regular file."""
    found = stat_of(path)
    return found is not None and stat.S_ISREG(found.st_mode)


def is_dir(path: str | Path) -> bool:
    """Whether ``path`` (links followed) is a directory."""
    found = stat_of(path)
    return found is not None and stat.S_ISDIR(found.st_mode)


def resolved(path: str | Path) -> Path:
    """``path`` made absolute with its links followed (``Path.resolve``), or made absolute as written
    (``..`` folded) when it cannot be resolved."""
    try:
        return Path(path).resolve()
    except PROBE_ERRORS:
        return Path(os.path.abspath(path))


__all__ = ["PROBE_ERRORS", "exists", "expanded", "is_dir", "is_file", "resolved", "stat_of"]
