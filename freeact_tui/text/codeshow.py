"""Code and commands as shown for approval: every character in sight, nothing pushed out of view.

What the user approves must be what runs. ``visible`` (the table of ``textsafe``) shows every
character that would hide or reorder text; this module adds what hides code by layout:

- a run of blank (or whitespace-only) lines pushes what follows below the fold — ``print("hi")``,
  80 blank lines, then ``os.system(…)``; a run of ``FOLD_LINES`` or more is drawn as one line
  ``⋯ 80 blank lines ⋯``;
- a run of spaces or tabs wider than ``FOLD_COLUMNS`` pushes the rest of its line off to the right
  (or, wrapped, onto rows of nothing); it is drawn as ``⋯ 200 spaces ⋯``;
- a one-line summary of a code action (a title, a refusal) names how many more lines there are.

``fold(text)`` returns the text to draw and where its fold marks are, so that a front end can
style them apart from the code (a literal ``⋯`` in code is then never taken for a fold).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from freeact_tui.text.safe import visible

FOLD_LINES = 3
"""Runs of this many blank lines or more are folded into one mark (one or two are code style)."""
FOLD_COLUMNS = 32
"""Runs of spaces and tabs longer than this are folded into one mark (eight levels of indentation fit)."""

_BLANK = re.compile(r"[ \t]*")
_WIDE = re.compile(rf"[ \t]{{{FOLD_COLUMNS + 1},}}")


@dataclass(frozen=True)
class Folded:
    """Code as drawn: ``text``, and the ``(start, end)`` offsets of each fold mark in it."""

    text: str
    marks: tuple[tuple[int, int], ...] = ()

    @property
    def folds(self) -> int:
        """How many runs were folded."""
        return len(self.marks)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _blank_mark(count: int) -> str:
    return f"⋯ {_plural(count, 'blank line')} ⋯"


def _wide_mark(run: str) -> str:
    word = "space" if "\t" not in run else "tab" if " " not in run else "blank"
    return f"⋯ {_plural(len(run), word)} ⋯"


def fold(text: str) -> Folded:
    """``text`` made visible, with each long run of blank lines and of spaces or tabs folded into a mark."""
    return fold_visible(visible(text))


def fold_visible(text: str) -> Folded:
    """Like ``fold`` for text already made visible (``visible`` escapes its own escapes: never apply it twice)."""
    lines = text.split("\n")
    ends_with_newline = len(lines) > 1 and lines[-1] == ""
    if ends_with_newline:
        lines.pop()  # the final newline ends the last line; it is no blank line of its own
    out: list[str] = []
    marks: list[tuple[int, int]] = []
    pos = 0  # where the next line starts in the joined text

    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and _BLANK.fullmatch(lines[j]):
            j += 1
        if j - i >= FOLD_LINES:
            sign = _blank_mark(j - i)
            marks.append((pos, pos + len(sign)))
            out.append(sign)
            pos += len(sign) + 1
            i = j
            continue
        line, i = lines[i], i + 1
        pieces: list[str] = []
        start = 0
        for match in _WIDE.finditer(line):
            pieces.append(line[start : match.start()])
            offset = pos + sum(map(len, pieces))
            sign = _wide_mark(match.group())
            marks.append((offset, offset + len(sign)))
            pieces.append(sign)
            start = match.end()
        pieces.append(line[start:])
        out.append("".join(pieces))
        pos += len(out[-1]) + 1
    if ends_with_newline:
        out.append("")
    return Folded("\n".join(out), tuple(marks))


def shown(text: str) -> str:
    """``text`` as drawn for approval (made visible, long blank runs folded), without styling."""
    return fold(text).text


def summary(text: str, limit: int = 80) -> str:
    """One line for a code action or command: its first non-blank line (made visible, cut at ``limit``),
    and how many more non-blank lines follow, so that a short first line never stands for the whole."""
    lines = [line for line in visible(text).split("\n") if not _BLANK.fullmatch(line)]
    if not lines:
        return ""
    first = " ".join(lines[0].split())  # what is left of whitespace is spaces and tabs
    if len(first) > limit:
        first = first[: limit - 1] + "…"
    more = len(lines) - 1
    return f"{first} (+{_plural(more, 'more line')})" if more else first


__all__ = ["FOLD_COLUMNS", "FOLD_LINES", "Folded", "fold", "fold_visible", "shown", "summary"]
