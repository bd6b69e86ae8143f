"""Keys that terminals send in ways Textual does not name.

Alt+Enter: xterm, tmux and most terminals without the kitty keyboard protocol send ESC CR. Textual
8.2 has no entry for that sequence, so its parser reissues it as ESC (taken as Alt) followed by CR —
and CR maps to plain "enter", dropping the Alt: Alt+Enter would send the prompt. Naming the
two-byte sequence "alt+enter" lets the prompt insert a newline instead.
"""

from __future__ import annotations

from typing import cast

from textual import _ansi_sequences
from textual.keys import Keys

ALT_ENTER = "\x1b\r"


class _KeyName(str):
    """Stands in for a ``Keys`` member: the parser reads only ``.value``."""

    @property
    def value(self) -> str:
        return str(self)


def install() -> None:
    """Teach Textual's input parser the sequences above (idempotent)."""
    table = cast(dict[str, object], _ansi_sequences.ANSI_SEQUENCES_KEYS)
    table.setdefault(ALT_ENTER, (cast(Keys, _KeyName("alt+enter")),))
