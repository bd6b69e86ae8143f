"""One writer per session: a lock file with the writer's pid, next to the session's histories.

A second process that opens the same session finds the lock and gets ``SessionLocked`` (naming the
pid), so that two terminals never interleave appends to one file. A lock whose process is gone (a
crash, a kill) is stale and is taken over. Within one process (the main agent and its subagents)
the lock is shared.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from freeact_tui.store import checked_read

LOCK_FILE = "lock"


class SessionLocked(Exception):
    """The session is open for writing in another process; ``str(error)`` says which."""

    def __init__(self, path: Path, pid: int) -> None:
        super().__init__(
            f"session {path.parent.name} is open in another freeact-tui (pid {pid}); "
            f"close that one first, or delete {path} if pid {pid} is not freeact-tui"
        )
        self.path = path
        self.pid = pid


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (someone else's too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process, alive
    return True


def _holder(path: Path) -> int | None:
    try:
        text = checked_read.read_own(path, limit=64).decode("utf-8").strip()
    except (FileNotFoundError, OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


def acquire(session_dir: Path) -> bool:
    """Take the lock of the session in ``session_dir`` (which exists).

    Returns:
        ``True`` if this call created the lock (release it when done), ``False`` if this process
        holds it already.

    Raises:
        SessionLocked: a live process holds it.
    """
    path = session_dir / LOCK_FILE
    for _ in range(3):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            pid = _holder(path)
            if pid == os.getpid():
                return False
            if pid is not None and alive(pid):
                raise SessionLocked(path, pid) from None
            # Stale (its process is gone) or unreadable: take it over.
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            continue
        try:
            os.write(fd, f"{os.getpid()}\n".encode())
        finally:
            os.close(fd)
        return True
    pid = _holder(path)
    raise SessionLocked(path, pid if pid is not None else -1)


def release(session_dir: Path) -> None:
    """Remove the lock if this process holds it."""
    path = session_dir / LOCK_FILE
    if _holder(path) == os.getpid():
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
