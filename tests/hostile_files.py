"""Stand-ins for a file a reader may meet in a hostile folder (a FIFO, a link to ``/dev/zero``, a 5 GB sparse
file) and an alarm that fails a read still going after a bound: shared by the bounded-reader tests."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _sparse(path: Path) -> None:
    with path.open("wb") as f:
        f.truncate(5 * 1024**3)  # past every bound (the largest, a history's, is 1 GiB)


STANDINS: dict[str, Callable[[Path], None]] = {"fifo": _fifo, "dev_zero": _dev_zero, "sparse_5gb": _sparse}


class StillReading(BaseException):
    """Raised by the alarm: no reader's ``except OSError`` may take it for a file it cannot read."""


@contextmanager
def within(seconds: int) -> Iterator[None]:
    """Fail (``StillReading``) whatever runs inside for longer than ``seconds``."""

    def expired(signum: int, frame: object) -> None:
        raise StillReading(f"still reading after {seconds} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
