"""Where a session's open turn began, on disk: any process that copies the session (a fork) leaves the
open turn out, whichever process runs it.

As a turn opens, the main agent writes ``open-turn.json`` beside the histories: its pid and the size of
each history file at that moment (the session's last completed point); the turn's end removes it. So
"is a turn open, and where did it begin?" is a fact of the store, not of one process's memory. A marker
whose writer is gone (a crash, a kill) names no open turn: the histories are then whole, and a load
answers the crashed turn's unanswered calls.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from freeact_tui.store.checked_read import read_own
from freeact_tui.store.lock import alive

_MAX_MARKER = 1 << 20
"""Bytes of an open-turn marker read at most (a pid and one size per history file)."""

OPEN_TURN_FILE = "open-turn.json"


def history_sizes(session_dir: Path) -> dict[str, int]:
    """The size of each history file of a session: a point its histories can be copied up to."""
    return {
        p.name: p.stat().st_size for p in session_dir.glob("*.jsonl") if p.is_file() and not p.is_symlink()
    }


def mark_open(session_dir: Path) -> Path:
    """Note that a turn opens now in the session of ``session_dir`` (which exists); the marker's path."""
    path = session_dir / OPEN_TURN_FILE
    data = json.dumps({"pid": os.getpid(), "sizes": history_sizes(session_dir)})
    temp = session_dir / f".{OPEN_TURN_FILE}.{os.getpid()}"
    temp.write_text(data, encoding="utf-8")
    os.replace(temp, path)  # a reader sees the old marker or the new one, never half of one
    return path


def mark_closed(session_dir: Path) -> None:
    """The turn this process opened in ``session_dir`` has ended (a marker of another process stays)."""
    path = session_dir / OPEN_TURN_FILE
    marker = _read(path)
    if marker is not None and marker[0] == os.getpid():
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def open_turn_sizes(session_dir: Path) -> dict[str, int] | None:
    """The sizes of the session's histories where its open turn began (``history_sizes`` then), or ``None``
    when no turn is open: no marker, one that cannot be read, or one whose process is gone."""
    marker = _read(session_dir / OPEN_TURN_FILE)
    if marker is None or not alive(marker[0]):
        return None
    return marker[1]


def _read(path: Path) -> tuple[int, dict[str, int]] | None:
    try:
        data = json.loads(read_own(path, limit=_MAX_MARKER))  # a FIFO or a huge file planted there: not read
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    pid, sizes = data.get("pid"), data.get("sizes")
    if not isinstance(pid, int) or isinstance(pid, bool) or not isinstance(sizes, dict):
        return None
    if not all(isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in sizes.items()):
        return None
    return pid, sizes


__all__ = ["OPEN_TURN_FILE", "history_sizes", "mark_closed", "mark_open", "open_turn_sizes"]
