"""The one reader of a session store's files: regular files only, bounded, and checked against the trust check.

A store inside a project (``.freeact/sessions``) is the project's: a ``git pull``, another process or a
second app may change a session after the trust check, keeping its size and modification time, or put a
FIFO, a device or a link to ``/dev/zero`` where a file is expected. So every read the store makes goes
through this module, which reads through ``project.files`` (opened without blocking, a regular file on
the open descriptor, at most a bound; anything else is a one-line ``ProjectFileError``):

- ``read_bytes``: a file read to *use* a session (its ``meta.json``, a history, the first prompt a
  listing shows) reads through ``project.trusted``: a file of a checked folder is used only with the bytes
  the check read (or the app wrote since); anything else raises ``ProjectFileChanged`` (an ``OSError`` of
  one line). A store no check covers (the user's own data dir) is read as it is.
- ``read_own``: a file the store keeps for itself (a lock's holder, a history being cut by a rewind,
  a saved tool result, the listing's cache): bounded and regular, no trust check (the caller decides
  whether to use it at all: the listing's cache is never read in a checked store, ``index``).
"""

from __future__ import annotations

from pathlib import Path

from freeact_tui.project import files as projectfiles
from freeact_tui.project import trusted

ProjectFileChanged = trusted.ProjectFileChanged
ProjectFileError = projectfiles.ProjectFileError
kind = projectfiles.kind

MAX_STORE_FILE = 1024 * 1024 * 1024
"""Bytes one file of a session store may hold (a history with its images); more is refused, never read."""


def read_bytes(path: Path, *, limit: int = MAX_STORE_FILE) -> bytes:
    """The content of the store's file ``path``, as the trust check read it when a check covers it.

    Raises:
        ProjectFileChanged: a checked folder's file whose bytes are not the ones the check read.
        ProjectFileError: not a regular file, or more than ``limit`` bytes.
        FileNotFoundError, OSError: it cannot be read (missing, no permission).
    """
    return trusted.read_bytes(path, limit=limit)


def read_own(path: Path, *, limit: int = MAX_STORE_FILE, follow: bool = False) -> bytes:
    """The content of a file the store keeps for itself: a regular file of at most ``limit`` bytes, a
    symlink not followed (unless ``follow``).

    Raises:
        ProjectFileError: not a regular file (a FIFO, a device, a symlink), or more than ``limit`` bytes.
        FileNotFoundError, OSError: it cannot be read.
    """
    return projectfiles.read_bytes(path, limit=limit, follow=follow)


__all__ = ["MAX_STORE_FILE", "ProjectFileChanged", "ProjectFileError", "kind", "read_bytes", "read_own"]
