"""Keys typed while the app is still starting arrive as typed.

Until the UI puts the terminal in raw mode, the terminal's line discipline cooks what the user types
ahead: Enter (``\\r``) is turned into ``\\n`` on arrival (ICRNL), which the UI then reads as Ctrl+J (a
newline in the prompt), so a prompt typed during the second or so of start-up was never sent; and
the keys are echoed onto the shell's screen. ``hold()``, called first thing by the console script,
takes the terminal out of cooked input (no ICRNL, ICANON, ECHO; signals such as Ctrl+C still work)
and keeps the original settings, which Textual then restores at exit and around a suspend
(``adopt``), and ``restore()`` puts back whatever else happens (an error before the UI, ``os._exit``).
"""

from __future__ import annotations

import atexit
import sys
from typing import Any

_saved: list[Any] | None = None
_fd: int | None = None


def hold() -> None:
    """Stop cooking typed-ahead keys (a no-op when stdin is not a terminal, or held already)."""
    global _saved, _fd
    if _saved is not None:
        return
    try:
        import termios

        fd = sys.stdin.fileno()
        if not sys.stdin.isatty():
            return
        saved = termios.tcgetattr(fd)
        raw = termios.tcgetattr(fd)
        raw[0] &= ~termios.ICRNL
        raw[3] &= ~(termios.ICANON | termios.ECHO)
        raw[6][termios.VMIN], raw[6][termios.VTIME] = 1, 0
        termios.tcsetattr(fd, termios.TCSANOW, raw)
    except Exception:  # no termios, a closed stdin, a terminal that refuses (a background job)
        return
    _saved, _fd = saved, fd
    atexit.register(restore)


def original() -> list[Any] | None:
    """The terminal settings from before ``hold()`` (``None`` when nothing is held)."""
    return _saved


def adopt(driver: object) -> None:
    """Make a Textual driver restore the settings from before ``hold()``, not the held ones (it keeps
    those it found at start in ``attrs_before``, to put back at exit and when suspending)."""
    if _saved is not None and getattr(driver, "attrs_before", None) is not None:
        driver.attrs_before = [list(v) if isinstance(v, list) else v for v in _saved]  # type: ignore[attr-defined]


def restore() -> None:
    """Put the terminal settings from before ``hold()`` back (safe to call more than once)."""
    if _saved is None or _fd is None:
        return
    try:
        import termios

        termios.tcsetattr(_fd, termios.TCSADRAIN, _saved)
    except Exception:  # the terminal is gone (a closed pty): nothing to restore
        pass


__all__ = ["adopt", "hold", "original", "restore"]
