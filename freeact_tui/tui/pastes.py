"""Long pastes in the prompt: shown as a placeholder (``[Pasted text #1 +2000 lines]``) while the full
text is kept for the message. The prompt stays readable; the model gets every character."""

from __future__ import annotations

import re

PASTE_FOLD_LINES = 10
"""A paste of more lines than this is shown as a placeholder."""

_TOKEN = re.compile(r"\[Pasted text #(\d+) \+\d+ lines\]")


def line_breaks(text: str) -> str:
    """``text`` with every line break as the prompt keeps it, ``\n``: a terminal pastes a line break as
    CR (tmux's default, xterm) or CRLF as well as LF, and a paste of 2,000 CR-separated lines counted
    as one line was kept raw in the prompt and sent with its CRs."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


class PastedTexts:
    """The long pastes of one draft, by number."""

    def __init__(self) -> None:
        self._texts: dict[int, str] = {}

    def fold(self, text: str) -> str | None:
        """The placeholder to insert for ``text`` (None: short enough to insert as it is); the text kept
        has its line breaks as the prompt keeps them (``line_breaks``)."""
        text = line_breaks(text)
        lines = text.count("\n") + 1
        if lines <= PASTE_FOLD_LINES:
            return None
        number = len(self._texts) + 1
        self._texts[number] = text
        return f"[Pasted text #{number} +{lines} lines]"

    def expand(self, draft: str) -> str:
        """``draft`` with each placeholder of this draft replaced by its text (others left as typed)."""
        return _TOKEN.sub(lambda m: self._texts.get(int(m.group(1)), m.group(0)), draft)

    def clear(self) -> None:
        self._texts.clear()


__all__ = ["PASTE_FOLD_LINES", "PastedTexts", "line_breaks"]
