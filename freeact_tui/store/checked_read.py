"""The one reader of a session store's files: the bytes, checked against what the trust check read.

A store inside a project (``.freeact/sessions``) is the project's: a ``git pull``, another process or a
second app may change a session after the trust check, keeping its size and modification time. So every
read the store makes to *use* a session (its ``meta.json``, a history, the first prompt a listing shows)
goes through ``read_bytes`` here, which reads through ``project.trusted``: a file of a checked folder is
used only with the bytes the check read (or the app wrote since); anything else raises
``ProjectFileChanged`` (an ``OSError`` of one line). A store no check covers (the user's own data dir)
is read as it is.
"""

from __future__ import annotations

import sys
from pathlib import Path

from freeact_tui.project import trusted

ProjectFileChanged = trusted.ProjectFileChanged

# A history is read whole (as it always was); the bound is the reader's, not a size a history may have.
_UNBOUNDED = sys.maxsize - 1


def read_bytes(path: Path) -> bytes:
    """The content of the store's file ``path``, as the trust check read it when a check covers it.

    Raises:
        ProjectFileChanged: a checked folder's file whose bytes are not the ones the check read.
        FileNotFoundError, OSError: it cannot be read (missing, not a regular file, no permission).
    """
    return trusted.read_bytes(path, limit=_UNBOUNDED)


__all__ = ["ProjectFileChanged", "read_bytes"]
