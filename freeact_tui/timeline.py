"""Start-up timeline: ``FREEACT_TUI_TIMELINE=<file>`` makes the app append ``<stage> <time>`` lines.

The time is ``time.monotonic()`` (one clock for every process of the machine), so ``bench/launch.py``
can put the stages next to the moment it spawned the app. Unset (the normal case), ``mark`` returns at
once: this module imports only ``os`` and ``time``, and nothing is opened or written.
"""

from __future__ import annotations

import os
import time

ENV = "FREEACT_TUI_TIMELINE"
_PATH = os.environ.get(ENV) or None


def enabled() -> bool:
    return _PATH is not None


def mark(stage: str, at: float | None = None) -> None:
    """Append ``stage`` with ``at`` (default: now), a ``time.monotonic()`` time, if a timeline is kept."""
    if _PATH is None:
        return
    line = f"{stage} {time.monotonic() if at is None else at:.6f}\n"
    try:
        # One small O_APPEND write per line: the lines of concurrent threads do not interleave.
        fd = os.open(_PATH, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
    except OSError:
        pass  # a timeline is a measurement aid: it never stops the app


__all__ = ["ENV", "enabled", "mark"]
