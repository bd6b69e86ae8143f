"""The one check of a path a client sends (a session's ``cwd``): whatever the path (relative, a NUL byte, a
component or a whole path too long, a loop of links, a folder that cannot be searched), the answer is invalid
params (-32602) with a one-line reason, never an internal error. Every method that takes a ``cwd`` comes here."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from freeact_tui.acp.errors import invalid_params

SHOWN = 120
"""At most this many characters of a refused path in its message (a hostile one may be megabytes)."""


def _shown(value: str) -> str:
    return repr(value if len(value) <= SHOWN else value[:SHOWN] + "…")


def client_folder(cwd: Any) -> Path:
    """A client's ``cwd`` as a folder: an absolute path of an existing directory, else invalid params."""
    if not isinstance(cwd, str) or not cwd:
        raise invalid_params(f"cwd must be an absolute path, not {_shown(str(cwd))}")
    path = Path(cwd)
    if not path.is_absolute():
        raise invalid_params(f"cwd must be an absolute path, not {_shown(cwd)}")
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError) as exc:  # ENAMETOOLONG, ELOOP, EACCES, ENOENT, an embedded NUL byte
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise invalid_params(f"cwd {_shown(cwd)} cannot be used: {reason}") from None
    if not stat.S_ISDIR(mode):
        raise invalid_params(f"cwd {_shown(cwd)} is not a directory")
    return path


__all__ = ["client_folder"]
