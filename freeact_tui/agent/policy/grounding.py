"""Whether a final answer is grounded: not the app's own words, not numbers no output showed (#45).

Two structural checks of a reply that would end a turn, in any language (no phrase is matched):

- ``echoes_app_text``: the reply is made of text the app itself sent — its notes (a cancelled
  request, a refused or broken call, a nudge, the switch to text, the framing of a results message)
  or the request echoed back — decided by overlap: most of the reply's word trigrams occur in
  those texts. Outputs of actions are not the app's text (an answer may quote them).
- ``unchecked_numbers``: numbers of the reply (two or more digits, or a decimal) that no output of
  the turn holds, nor its request or the code's literals (comments are not read), and that are no
  simple derivation of them — all read by ``numbers.py``, the one number reader, and compared as
  values (``86 400``, ``86.400``, ``8.64e4``, ``86.4k`` are 86400; ``5.93`` is 5.92857 rounded; 1440
  minutes is 86400 seconds; ``45.67%`` is a printed 0.4567). ``unknown_numbers``: the same reading
  for a turn in which nothing worked, without derivations.

Each leads to one nudge a turn (``nudge.py``'s table); a second such reply is the answer.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator, Sequence
from typing import Literal

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolReturnPart,
    UserPromptPart,
)

from freeact_tui.agent.policy.numbers import Grounds, read_numbers, values
from freeact_tui.agent.policy.outcomes import GUARDED_KEY, RESULTS_KEY, outcomes
from freeact_tui.store.meta_keys import NUDGE_KEY, SWITCH_KEY
from freeact_tui.store.prompt_record import CUT_KEY
from freeact_tui.store.transcript import content_text

_WORD = re.compile(r"\w+")
ECHO_SHARE = 0.8
"""The share of a reply's word trigrams found in the app's texts that makes it an echo."""
ECHO_MIN_WORDS = 4
"""Shorter replies are never echoes ("Yes.", "42", a file name)."""


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


SourceKind = Literal["note", "user", "output", "code"]


def _sources(messages: Sequence[ModelMessage]) -> Iterator[tuple[SourceKind, str]]:
    """Every text of ``messages`` the model was sent or wrote as an action, by who made it: the app's
    ``note``s (a cancelled request's close, a broken, refused, rejected or interrupted call's return, a
    nudge, the switch to text, a results message's framing), the ``user``'s messages, the ``output``s
    of actions, and the ``code`` of actions (without comments: they are no output). One reading for
    every check of this module."""
    for message in messages:
        meta = message.metadata if isinstance(message.metadata, dict) else {}
        if isinstance(message, ModelResponse):
            if meta.get(CUT_KEY) == "cancelled":  # the note that closes a cancelled request
                yield from (("note", p.content) for p in message.parts if isinstance(p, TextPart))
            continue
        ran = meta.get(RESULTS_KEY)
        for part in message.parts:
            if isinstance(part, ToolReturnPart):
                pmeta = part.metadata if isinstance(part.metadata, dict) else {}
                text = content_text(part.content)
                if _is_note(part) or pmeta.get("outcome") == "interrupted":
                    yield "note", text
                if not _is_note(part):
                    yield "output", text  # an interrupted action's output is what it printed before
            elif isinstance(part, UserPromptPart) and (NUDGE_KEY in meta or SWITCH_KEY in meta):
                yield "note", content_text(part.content)
            elif isinstance(part, UserPromptPart) and ran is not None:
                yield "note", _framing(content_text(part.content), ran)
                if isinstance(ran, list):
                    yield from (("output", str(a.get("output", ""))) for a in ran if isinstance(a, dict))
            elif isinstance(part, UserPromptPart):
                yield "user", content_text(part.content)
    for action in outcomes(messages):
        yield "code", without_comments(action.code or "")


def _app_texts(history: Sequence[ModelMessage], turn: Sequence[ModelMessage]) -> Iterator[str]:
    """What the app itself sent the model: its notes in the whole history, and the turn's request."""
    yield from (text for kind, text in _sources(history) if kind == "note")
    yield from (text for kind, text in _sources(turn) if kind == "user")


def _framing(text: str, actions: object) -> str:
    """A results message without the outputs it reports: the app's framing only."""
    if isinstance(actions, list):
        for item in actions:
            output = item.get("output") if isinstance(item, dict) else None
            if isinstance(output, str) and output:
                text = text.replace(output, "\n")
    return text


def echoes_app_text(reply: str, history: Sequence[ModelMessage], turn: Sequence[ModelMessage]) -> bool:
    """The reply is made of the app's own words (its notes, or the request echoed back): see the module."""
    words = _words(reply)
    if len(words) < ECHO_MIN_WORDS:
        return False
    trigrams = {tuple(words[i : i + 3]) for i in range(len(words) - 2)}
    known: set[tuple[str, ...]] = set()
    for text in _app_texts(history, turn):
        source = _words(text)
        known.update(tuple(source[i : i + 3]) for i in range(len(source) - 2))
    return len(trigrams & known) >= ECHO_SHARE * len(trigrams)


def _is_note(part: ToolReturnPart) -> bool:
    """A tool return the app wrote instead of an output: a broken call, a refused or rejected one."""
    meta = part.metadata if isinstance(part.metadata, dict) else {}
    return bool(meta.get("malformed") or meta.get(GUARDED_KEY) or meta.get("outcome") == "rejected")


def _grounds(messages: Sequence[ModelMessage]) -> Grounds:
    """The values ``messages`` showed: outputs of actions, and the user's own messages and the code's
    literals (``x = 99`` is no claim) as given. The app's notes and code comments count as neither."""
    outputs: list[float] = []
    given: list[float] = []
    for kind, text in _sources(messages):
        if kind == "output":
            outputs.extend(values(text))
        elif kind != "note":
            given.extend(values(text))
    return Grounds(outputs, given)


def without_comments(code: str) -> str:
    """``code`` without its comments (``print(24*60*60)  # 91234``: the comment is no output)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):  # a %%bash cell, !lines: a shell comment starts a word
        return re.sub(r"(?m)(?:^|(?<=\s))#.*$", "", code)
    lines = code.splitlines(keepends=True)
    for token in reversed([t for t in tokens if t.type == tokenize.COMMENT]):
        row, col = token.start
        line = lines[row - 1]
        lines[row - 1] = line[:col] + line[token.end[1] :]
    return "".join(lines)


def unchecked_numbers(reply: str, turn: Sequence[ModelMessage]) -> list[str]:
    """The reply's numbers that no output of the turn, nor its request or code, holds or derives
    (``numbers.Grounds``: values, with a tolerance and the bounded derivations)."""
    grounds = _grounds(turn)
    return [s.text for s in read_numbers(reply) if s.significant and not grounds.holds(s)]


def unknown_numbers(reply: str, history: Sequence[ModelMessage]) -> list[str]:
    """The reply's numbers that no output or user message of ``history`` holds, derivations not counted:
    for a turn in which nothing worked (``1234 * 5678 = 7006652`` worked out in the head is no result)."""
    grounds = _grounds(history)
    return [s.text for s in read_numbers(reply) if s.significant and not grounds.holds(s, derived=False)]


__all__ = [
    "ECHO_MIN_WORDS",
    "ECHO_SHARE",
    "echoes_app_text",
    "unchecked_numbers",
    "unknown_numbers",
    "without_comments",
]
