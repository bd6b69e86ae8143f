"""Whether a reply restates a text: word-multiset overlap normalised by length, in any language (#45).

A small model restates the request or an app note instead of answering, and not word for word: words
reordered, a few dropped or changed, another case or punctuation. Word trigrams miss that (reordered
words share none). ``restates(reply, text)`` compares the two as multisets of words (casefolded; a run
of Chinese, Japanese or Korean text as its character pairs): the words they share are at least
``RESTATE_SHARE`` of the LONGER of the two. So a restatement with up to a fifth of its words dropped or
replaced, in any order, is one; an answer that quotes a few words of the request is not (what it adds
makes it longer, and what it leaves out makes it share less). No phrase of any language is read.

The REQUEST is held to a stricter rule (``adds_nothing``): a reply echoes it only when it adds no word
the request lacks — "Yes, 17 is a prime number." to "Is 17 a prime number?" shares nearly every word,
but its "Yes" answers the question.
"""

from __future__ import annotations

import re
from collections import Counter

_WORD = re.compile(r"\w+")
RESTATE_SHARE = 0.75
"""The share of the longer text's words the two share that makes one restate the other."""
RESTATE_MIN_WORDS = 4
"""Shorter texts are never compared ("Yes.", a file name): a few words say too little."""


def _unspaced(word: str) -> bool:
    return any("\u3000" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af" for ch in word)


def words(text: str) -> list[str]:
    """The words of ``text``, casefolded; a run of unspaced script as its character pairs."""
    found: list[str] = []
    for word in _WORD.findall(text.casefold()):
        if _unspaced(word) and len(word) > 2:
            found.extend(word[i : i + 2] for i in range(len(word) - 1))
        else:
            found.append(word)
    return found


def restates(reply: str, text: str) -> bool:
    """``reply`` is ``text`` restated (see the module)."""
    mine, theirs = Counter(words(reply)), Counter(words(text))
    longer = max(mine.total(), theirs.total())
    if min(mine.total(), theirs.total()) < RESTATE_MIN_WORDS:
        return False
    return (mine & theirs).total() >= RESTATE_SHARE * longer


def adds_nothing(reply: str, request: str) -> bool:
    """``reply`` echoes ``request``: it has at least ``RESTATE_MIN_WORDS`` words and every one of them
    (casefolded; unspaced script as character pairs) is one of the request's, as many times at most —
    the request reordered, some of its words dropped (#45). Any word the request lacks ("yes", "ja",
    "是的", a number, a value an output showed, "not") makes it an answer: a reply that affirms or
    states what a question asks adds that word. The app's notes are judged by ``restates``: a paraphrase
    of a note with a word changed is still the note."""
    mine = Counter(words(reply))
    return mine.total() >= RESTATE_MIN_WORDS and not (mine - Counter(words(request)))


def part_of(reply: str, text: str) -> bool:
    """``reply``'s words are a run of ``text``'s words, in order: a part of it quoted (a request to say or
    write something is answered with its part: "Say hello from X" → "hello from X")."""
    mine, theirs = words(reply), words(text)
    return any(theirs[i : i + len(mine)] == mine for i in range(len(theirs) - len(mine) + 1))


__all__ = ["RESTATE_MIN_WORDS", "RESTATE_SHARE", "adds_nothing", "part_of", "restates", "words"]
