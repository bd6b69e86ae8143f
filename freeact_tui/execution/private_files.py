"""Directories and files only their owner may read: stores that copy ``.env`` files, keys, logs."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TextIO


def private_dir(path: Path) -> Path:
    """``path`` created if missing (with its parents), mode 700 (an existing one is narrowed to it).

    Returns:
        ``path``.
    """
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):  # not ours (a shared mount): leave it as it is
        if path.stat().st_mode & 0o077:
            path.chmod(0o700)
    return path


def open_private_append(path: Path) -> TextIO:
    """``path`` opened for appending text, created with mode 600 (an existing one is narrowed to it).

    Raises:
        OSError: It cannot be opened.
    """
    private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    with contextlib.suppress(OSError):
        os.fchmod(fd, 0o600)
    return os.fdopen(fd, "a", encoding="utf-8")
