"""Telling a user who looks elsewhere: a bell and a desktop notification when the terminal is not focused.

Sent when an approval starts waiting, and when a turn that ran longer than ``notify_after`` seconds
ends. Desktop notifications use the terminal's own escape sequences — OSC 9 (iTerm2, WezTerm,
Windows Terminal, kitty, ghostty) and OSC 777 (foot, urxvt, VTE terminals) — so nothing needs to be
installed; inside tmux they are wrapped so that tmux passes them to the outer terminal. Terminals
that know neither ignore them. Nothing is sent while the terminal has focus (Textual tracks it with
focus reporting), so a user watching the screen is never interrupted.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from freeact_tui.text.safe import one_line_summary

_TITLE = "freeact"
_MAX_BODY = 200


def _clean(text: str) -> str:
    """One line without control characters (they would end the escape sequence early)."""
    flat = "".join(ch for ch in " ".join(text.split()) if ch.isprintable() and ch not in ";\x1b\x07")
    return one_line_summary(flat, _MAX_BODY)


def desktop_sequences(body: str, *, title: str = _TITLE, tmux: bool = False) -> str:
    """OSC 9 and OSC 777 notifications of ``body`` (wrapped for tmux pass-through if ``tmux``)."""
    body, title = _clean(body), _clean(title)
    sequences = [f"\x1b]9;{title}: {body}\x07", f"\x1b]777;notify;{title};{body}\x07"]
    if tmux:
        sequences = ["\x1bPtmux;" + s.replace("\x1b", "\x1b\x1b") + "\x1b\\" for s in sequences]
    return "".join(sequences)


@dataclass
class Notifier:
    """Decides whether and how to notify; ``write`` sends raw text to the terminal."""

    write: Callable[[str], None]
    focused: Callable[[], bool]
    bell: bool = True
    desktop: bool = True
    after: float = 30.0
    tmux: bool = field(default_factory=lambda: bool(os.environ.get("TMUX")))
    sent: list[str] = field(default_factory=list)
    """What was sent (the notification texts), newest last."""

    def approval_waiting(self, what: str) -> None:
        self._notify(f"Approval needed: {what}")

    def turn_finished(self, seconds: float, outcome: str) -> None:
        if seconds >= self.after:
            self._notify(f"{outcome} after {seconds:.0f} s")

    def _notify(self, text: str) -> None:
        if self.focused() or not (self.bell or self.desktop):
            return
        out = ""
        if self.bell:
            out += "\x07"
        if self.desktop:
            out += desktop_sequences(text, tmux=self.tmux)
        self.write(out)
        self.sent.append(text)
