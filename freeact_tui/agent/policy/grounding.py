"""Whether a final answer is grounded: not the app's own words, not numbers no output showed (#45).

Two structural checks of a reply that would end a turn, in any language (no phrase is matched):

- ``echoes_app_text``: the reply is made of text the app itself sent — its notes (a cancelled
  request, a refused or broken call, a nudge, the switch to text, the framing of a results message)
  or the request echoed back — decided by overlap: most of the reply's word trigrams occur in
  those texts. Outputs of actions are not the app's text (an answer may quote them).
- ``unchecked_numbers``: numbers of the reply (two or more digits, or a decimal) that appear in no
  output or code of the turn and not in the user's messages, compared by value (``86,400`` is ``86400.0``;
  ``5.93`` is ``5.92857`` rounded).

Each leads to one nudge a turn (``nudge.py``'s table); a second such reply is the answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from decimal import Decimal, InvalidOperation

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolReturnPart,
    UserPromptPart,
)

from freeact_tui.agent.policy.outcomes import RESULTS_KEY, outcomes
from freeact_tui.store.meta_keys import NUDGE_KEY, SWITCH_KEY
from freeact_tui.store.prompt_record import CUT_KEY
from freeact_tui.store.step_record import StepRecord, stored_text_actions
from freeact_tui.store.transcript import content_text

_WORD = re.compile(r"\w+")
ECHO_SHARE = 0.8
"""The share of a reply's word trigrams found in the app's texts that makes it an echo."""
ECHO_MIN_WORDS = 4
"""Shorter replies are never echoes ("Yes.", "42", a file name)."""


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def _app_texts(history: Sequence[ModelMessage], turn: Sequence[ModelMessage]) -> Iterator[str]:
    """What the app itself sent the model: its notes in the whole history, and the turn's request."""
    for message in history:
        if isinstance(message, ModelResponse):
            meta = message.metadata if isinstance(message.metadata, dict) else {}
            if meta.get(CUT_KEY) == "cancelled":  # the note that closes a cancelled request
                yield from (p.content for p in message.parts if isinstance(p, TextPart))
            continue
        meta = message.metadata if isinstance(message.metadata, dict) else {}
        for part in message.parts:
            if isinstance(part, ToolReturnPart):
                if StepRecord.of_part(part).refused:
                    yield content_text(part.content)
            elif isinstance(part, UserPromptPart) and (NUDGE_KEY in meta or SWITCH_KEY in meta):
                yield content_text(part.content)
            elif isinstance(part, UserPromptPart) and RESULTS_KEY in meta:
                yield _framing(content_text(part.content), meta)
    for message in turn:  # the request of this turn (the user's own words, echoed back)
        meta = message.metadata if isinstance(message.metadata, dict) else {}
        if isinstance(message, ModelRequest) and not meta.keys() & {NUDGE_KEY, SWITCH_KEY, RESULTS_KEY}:
            yield from (content_text(p.content) for p in message.parts if isinstance(p, UserPromptPart))


def _framing(text: str, metadata: object) -> str:
    """A results message without the outputs it reports: the app's framing only."""
    for block in stored_text_actions(metadata):
        if block.output:
            text = text.replace(block.output, "\n")
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


_NUMBER = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:[,_]\d{3})+|\d+)(?:\.\d+)?(?![\w])")


def _value(number: str) -> Decimal | None:
    try:
        return Decimal(re.sub(r"[,_]", "", number))
    except InvalidOperation:
        return None


def _significant(number: str) -> bool:
    """Two or more digits, or a decimal: ``7`` or ``3`` in prose is no result."""
    digits = re.sub(r"\D", "", number)
    return len(digits) >= 2 or "." in number


def _grounded(value: Decimal, known: set[Decimal]) -> bool:
    """``value`` is a known number, or one rounded to ``value``'s places."""
    if value in known:
        return True
    exponent = value.as_tuple().exponent
    places = -exponent if isinstance(exponent, int) and exponent < 0 else 0
    quantum = Decimal(1).scaleb(-places)
    return any(abs(k - value) <= quantum / 2 for k in known)


def _numbers(text: str) -> Iterator[Decimal]:
    values = (_value(n) for n in _NUMBER.findall(text))
    return (v for v in values if v is not None)


def unchecked_numbers(reply: str, turn: Sequence[ModelMessage]) -> list[str]:
    """The reply's numbers that appear in no output and no code of the turn and not in the user's messages."""
    known: set[Decimal] = set()
    for message in turn:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, UserPromptPart | ToolReturnPart):
                known.update(_numbers(content_text(part.content)))
    for action in outcomes(turn):  # a value the code set (``x = 99``) is no claim
        known.update(_numbers(action.code or ""))
    found: list[str] = []
    for number in _NUMBER.findall(reply):
        value = _value(number)
        if value is not None and _significant(number) and not _grounded(value, known):
            found.append(number)
    return found


__all__ = ["ECHO_MIN_WORDS", "ECHO_SHARE", "echoes_app_text", "unchecked_numbers"]
