"""What an app note QUOTED, told apart from what the app itself wrote (#45, model9).

The app's notes quote others: a number check names the reply's numbers ("These numbers in your reply
appear in no output of your code: 10,982,432"), a refusal names the error an output showed, a results
message the outputs it reports. What a note quotes is the model's, an output's or the user's text, not
the app's: a reply that repeats its own numbers after a note that quoted them is the model's words, and
must be judged as it is after any other note (the order of the notes never decides it).

By structure, in any language: a run of a note's words that occurs, in the same order, in a text the
note came after and that someone else made (the model's replies, the outputs, the user's messages, the
code) is quoted when it is ``QUOTE_RUN`` words or longer, or when it is a word with a digit (a number is
never the app's own word). ``own_segments`` returns what is left: the note's own words, as the runs
between the quoted ones (so that no word sequence spans a quote).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"\w+")
QUOTE_RUN = 3
"""Words in a row, found in an earlier text of someone else, that make a quote (not a shared word)."""


def _casefolded(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


class Quotable:
    """The texts a note may quote (what came before it and was made by someone else), as word runs."""

    def __init__(self) -> None:
        self.runs: set[tuple[str, ...]] = set()
        self.numbers: set[str] = set()

    def add(self, text: str) -> None:
        words = _casefolded(text)
        self.runs.update(tuple(words[i : i + QUOTE_RUN]) for i in range(len(words) - QUOTE_RUN + 1))
        self.numbers.update(w for w in words if any(ch.isdigit() for ch in w))

    def extend(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.add(text)

    def quoted(self, words: list[str]) -> list[bool]:
        """For each of ``words`` (casefolded), whether it is part of a quote."""
        marks = [w in self.numbers for w in words]
        for i in range(len(words) - QUOTE_RUN + 1):
            if tuple(words[i : i + QUOTE_RUN]) in self.runs:
                marks[i : i + QUOTE_RUN] = [True] * QUOTE_RUN
        return marks


def own_segments(note: str, quotable: Quotable) -> list[str]:
    """The runs of ``note``'s words that are the app's own (not quoted), each as one text."""
    words = _casefolded(note)
    segments: list[list[str]] = [[]]
    for word, quoted in zip(words, quotable.quoted(words), strict=True):
        if quoted:
            if segments[-1]:
                segments.append([])
        else:
            segments[-1].append(word)
    return [" ".join(s) for s in segments if s]


__all__ = ["QUOTE_RUN", "Quotable", "own_segments"]
