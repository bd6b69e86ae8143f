"""Whether a final answer is grounded: it answers something, not in the app's words, not with numbers
no output showed (#45).

Structural checks of a reply that would end a turn, in any language (no phrase of any language is
matched). Every text the model was sent is read once, by who made it (``_sources``): the app's notes,
the user's messages, the outputs of actions, the code of actions without its comments.

- ``answers_nothing`` (the main check for the app's words): right after a note of the app with no
  action since (a broken call's return, a refusal, a nudge, or the cancelled request before the
  turn) — a reply that refers to nothing anyone but the app said (a request the user CANCELLED is
  not said: a reply drawing on it and not on the new request refers to nothing): it shares fewer
  than two mark words (and under a quarter of its own) with the user's messages, the outputs, the
  code and the answers of earlier turns, and none of its numbers is a value they hold. A note
  translated or paraphrased ("Der Benutzer hat diese Anfrage abgebrochen…") names nothing of them;
  an answer names what it answers (a value, a file, a word of the request). A plain chat turn, a
  short reply ("Paris.", "Ja.") are never judged. What it cannot see: an answer in another language
  than the request and every output, which is asked for once more.
- ``borrows_app_words``: right after such a note with no action since, a reply whose mark words are
  (nearly) all the app's notes' or the user's (at most ``OWN_SHARE`` of them its own: no word, number or
  name the notes and the user's messages do not have), most of them the notes', and nothing from an
  output: a paraphrase of the note ("Please call the tool again with valid JSON arguments so it can
  compute how many seconds."), whatever words of the request it borrows. Never an answer.
- ``echoes_app_text``: the reply is made of text the app itself sent — its notes or the request echoed
  back — decided by overlap: most of the reply's word trigrams occur in those texts, or it restates one
  of them (``overlap.restates``: word multisets, reordered, a fifth of the words dropped or changed),
  or echoes the request (``overlap.adds_nothing``: reordered, words dropped, NONE added — "Yes, 17 is a
  prime number." answers "Is 17 a prime number?"; only once an action worked, and never a reply naming
  what an output showed). Outputs of
  actions are not the app's text (an answer may quote them).

What a note QUOTED (the reply's numbers in the number check, an error in a refusal) is not the app's:
every check here reads a note as its own words (``app_notes``, ``quoting.py``), so a reply repeating
the model's own numbers is judged alike after any note, whatever the order the notes came in.
- ``unchecked_numbers``: numbers of the reply (two or more digits, or a decimal) that no output of
  the turn holds, nor its request, and that are no simple derivation of them (the code's literals
  alone ground nothing: they are the model's own writing, as its reply is — ``x = 10982432`` then
  "10,982,432" states what no output showed; only the literal operands of the code whose run printed
  another number of the same reply do: "366 × 24 × 3,600 = 31,622,400", ``operands.py``) — all read by ``numbers.py``, the one number reader, and compared as
  values (``86 400``, ``86.400``, ``8.64e4``, ``86.4k`` are 86400; ``5.93`` is 5.92857 rounded; 1440
  minutes is 86400 seconds; ``45.67%`` is a printed 0.4567). ``unknown_numbers``: the same reading
  for a turn in which nothing worked, without derivations. Number words are no values (``numbers.py``).

Each leads to at most one nudge a turn (``nudge.py``'s table; ``answers_nothing`` none after either
of the others); a second such reply is the answer.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator, Sequence
from typing import Literal

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from freeact_tui.agent.policy.numbers import Grounds, Stated, aggregates, read_numbers, values, written_values
from freeact_tui.agent.policy.operands import code_operands
from freeact_tui.agent.policy.outcomes import RESULTS_KEY, Outcome, acted, outcomes
from freeact_tui.agent.policy.overlap import adds_nothing, part_of, restates
from freeact_tui.agent.policy.overlap import words as overlap_words
from freeact_tui.agent.policy.quoting import Quotable, own_segments
from freeact_tui.store.meta_keys import NUDGE_KEY, SWITCH_KEY
from freeact_tui.store.prompt_record import CUT_KEY
from freeact_tui.store.step_record import StepRecord, stored_text_actions
from freeact_tui.store.transcript import content_text

_WORD = re.compile(r"\w+")
ECHO_SHARE = 0.8
"""The share of a reply's word trigrams found in the app's texts that makes it an echo."""
ECHO_MIN_WORDS = 4
"""Shorter replies are never echoes ("Yes.", "42", a file name)."""
REQUEST_SHARE = 0.9
"""An echo of the request alone covers this share of the request's trigrams: the request restated, not a
part of it (which is how "say X" or "write X" is answered)."""


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


SourceKind = Literal["note", "user", "cancelled", "output", "code"]


def _sources(messages: Sequence[ModelMessage]) -> Iterator[tuple[SourceKind, str]]:
    """Every text of ``messages`` the model was sent or wrote as an action, by who made it: the app's
    ``note``s (a cancelled request's close, a broken, refused, rejected or interrupted call's return, a
    nudge, the switch to text, a results message's framing), the ``user``'s messages (``cancelled``:
    a request the user cancelled — not what grounds a later answer), the ``output``s of actions, and
    the ``code`` of actions (without comments: they are no output). One reading for every check of
    this module."""
    cancelled = _cancelled_requests(messages)
    for index, message in enumerate(messages):
        meta = message.metadata if isinstance(message.metadata, dict) else {}
        if isinstance(message, ModelResponse):
            if meta.get(CUT_KEY) == "cancelled":  # the note that closes a cancelled request
                yield from (("note", p.content) for p in message.parts if isinstance(p, TextPart))
            continue
        ran = meta.get(RESULTS_KEY)
        # a results message (perhaps with the switch to text): its outputs
        yield from (("output", block.output) for block in stored_text_actions(meta))
        for part in message.parts:
            if isinstance(part, ToolReturnPart):
                text = content_text(part.content)
                step = StepRecord.of_part(part)
                if step.refused:  # an interrupted one: the note, then its output
                    yield "note", text
                    # what the user said when rejecting it ("use pathlib") is the user's, inside the note
                    yield from (("user", a["instruction"]) for a in step.approvals if isinstance(a.get("instruction"), str))
                if not _is_note(part):
                    yield "output", text  # an interrupted action's output is what it printed before
            elif isinstance(part, UserPromptPart):
                text = content_text(part.content)
                if ran is not None:
                    yield "note", _framing(text, meta)
                elif NUDGE_KEY in meta or SWITCH_KEY in meta:
                    yield "note", text
                else:
                    yield ("cancelled" if index in cancelled else "user"), text
    for action in outcomes(messages):
        yield "code", without_comments(action.code or "")


def _asks(message: ModelMessage) -> bool:
    """A request with the user's own words (not a nudge, a switch, a results message)."""
    if not isinstance(message, ModelRequest) or not any(isinstance(p, UserPromptPart) for p in message.parts):
        return False
    meta = message.metadata if isinstance(message.metadata, dict) else {}
    return not any(key in meta for key in (NUDGE_KEY, SWITCH_KEY, RESULTS_KEY))


def _cancelled_requests(messages: Sequence[ModelMessage]) -> set[int]:
    """The user's requests (their index) the user cancelled: the last reply before the next request of
    the user (or the end) is a cancelled one (``CUT_KEY``)."""
    asks = [i for i, m in enumerate(messages) if _asks(m)]
    found: set[int] = set()
    for at, end in zip(asks, [*asks[1:], len(messages)], strict=False):
        replies = [m for m in messages[at + 1 : end] if isinstance(m, ModelResponse)]
        if replies and _cut(replies[-1]):
            found.add(at)
    return found


def app_notes(history: Sequence[ModelMessage]) -> list[tuple[str, list[str]]]:
    """Each note of the app in ``history``, whole and as its own words (``quoting.own_segments``): what
    it quoted of a text that came before it and that someone else made — the model's replies and calls,
    the outputs, the user's messages — is not the app's (#45: a number check quotes the reply's numbers)."""
    quotable = Quotable()
    notes: list[tuple[str, list[str]]] = []
    for message in history:
        if isinstance(message, ModelResponse) and not _cut(message):
            for part in message.parts:
                if isinstance(part, TextPart):
                    quotable.add(part.content)
                elif isinstance(part, ToolCallPart):
                    quotable.add(part.args_as_json_str())
            continue
        found = list(_sources([message]))
        notes.extend((text, own_segments(text, quotable)) for kind, text in found if kind == "note")
        quotable.extend(text for kind, text in found if kind != "note")
    return notes


MARK_LEN = 4
"""Words this long (or with a digit) mark what a text is about; shorter ones are mostly the function
words of a language written with spaces ("the", "ist", "de", "и"). Chinese, Japanese and Korean runs
are marked by their character pairs."""


REFERS_MARKS = 2
REFERS_SHARE = 0.25
"""A reply refers to what was said when it shares ``REFERS_MARKS`` mark words with it, or that share of
its own: one long function word in common ("della", "will") is no reference."""


def _unspaced(word: str) -> bool:
    """A run of Chinese, Japanese or Korean text: many words without spaces between them."""
    return any("\u3000" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af" for ch in word)


def _length(text: str) -> int:
    """How many words ``text`` has (a run of unspaced text: one per two characters)."""
    return sum(max(1, len(w) // 2) if _unspaced(w) else 1 for w in _words(text))


def _marks(text: str) -> set[str]:
    marks: set[str] = set()
    for word in _words(text):
        if _unspaced(word):
            marks.update(word[i : i + 2] for i in range(len(word) - 1))
        elif len(word) >= MARK_LEN or any(ch.isdigit() for ch in word):
            marks.add(word)
    return marks


def answers_nothing(reply: str, history: Sequence[ModelMessage], turn: Sequence[ModelMessage]) -> bool:
    """The reply, right after a note of the app, refers to nothing anyone but the app said (see the module).

    Judged only when the app's note is what the model last had and no action ran since: a broken or
    refused call's return, a nudge, or the cancelled request before the turn — then the note is what
    the model may answer instead of the request. After an action, a reply is judged by its numbers
    (a confirmation, "Done, the file is written.", names nothing either, and is an answer). A plain
    chat turn ("Hi!" "Hello! How can I help?") is never judged; nor a short reply ("Paris.", "Ja.")
    or one without mark words.
    """
    if _length(reply) < ECHO_MIN_WORDS or not _after_note(history, turn):
        return False
    mine = _marks(reply)
    if not mine:
        return False
    earlier = history[: max(0, len(history) - len(turn))]
    said = [t for kind, t in _sources(history) if kind not in ("note", "cancelled")]
    said += [
        p.content
        for m in earlier
        if isinstance(m, ModelResponse) and not _cut(m)
        for p in m.parts
        if isinstance(p, TextPart)
    ]
    shared = mine & set().union(*(_marks(text) for text in said))
    if len(shared) >= REFERS_MARKS or len(shared) >= REFERS_SHARE * len(mine):
        return False
    grounds = _grounds(history)
    return not any(s.significant and grounds.holds(s) for s in read_numbers(reply))


OWN_SHARE = 1 / 3
"""At most this share of a reply's mark words its own (in no note of the app, no user message): the
rest is borrowed, and when the notes lent most of it the reply restates the app (``borrows_app_words``)."""


def _mark_union(texts: Iterator[str] | list[str]) -> set[str]:
    marks: set[str] = set()
    for text in texts:
        marks |= _marks(text)
    return marks


def borrows_app_words(reply: str, history: Sequence[ModelMessage], turn: Sequence[ModelMessage]) -> bool:
    """The reply, right after a note of the app with no action since, is made of the app's notes' mark
    words and the user's (see the module): at most ``OWN_SHARE`` of its mark words its own, more of
    them the notes' than its own, none from an output or code, and no number an output holds."""
    if _length(reply) < ECHO_MIN_WORDS or not _after_note(history, turn):
        return False
    sources = list(_sources(history))
    written = app_notes(history)
    whole = _mark_union([note for note, _ in written])
    notes = _mark_union([segment for _, segments in written for segment in segments])
    mine = _marks(reply) - (whole - notes)  # what a note quoted is neither the app's nor the reply's own
    asked = _mark_union([t for kind, t in sources if kind == "user"])
    shown = _mark_union([t for kind, t in sources if kind in ("output", "code")])
    own = mine - notes - asked
    lent = (mine & notes) - asked
    if not lent or len(own) > OWN_SHARE * len(mine) or len(lent) <= len(own) or (mine & shown) - whole:
        return False
    grounds = _grounds(history)
    return not any(s.significant and grounds.holds(s) for s in read_numbers(reply))


def _after_note(history: Sequence[ModelMessage], turn: Sequence[ModelMessage]) -> bool:
    """The app's note is what the model last had: a note in ``turn`` (a broken or refused call's
    return, a nudge) or the cancelled request before it, and no action ran since."""
    notes = [i for i, m in enumerate(turn) if any(kind == "note" for kind, _ in _sources([m])) and not _rejected(m)]
    if notes:
        return not any(o.ran and not o.guarded for o in outcomes(turn[notes[-1] :]))
    before = history[len(history) - len(turn) - 1] if len(history) > len(turn) else None
    return isinstance(before, ModelResponse) and _cut(before) and not acted(turn)


def _rejected(message: ModelMessage) -> bool:
    """The user rejected the calls this message answers: what the model last had is the user's decision
    (and perhaps an instruction), and an acknowledgement ("Understood, I will leave it.") answers it."""
    returns = [p for p in message.parts if isinstance(p, ToolReturnPart)] if isinstance(message, ModelRequest) else []
    return bool(returns) and all(StepRecord.of_part(p).outcome == "rejected" for p in returns)


def _cut(response: ModelResponse) -> bool:
    return isinstance(response.metadata, dict) and response.metadata.get(CUT_KEY) == "cancelled"


def _framing(text: str, metadata: object) -> str:
    """A results message without the outputs it reports: the app's framing only."""
    for block in stored_text_actions(metadata):
        if block.output:
            text = text.replace(block.output, "\n")
    return text


def echoes_app_text(reply: str, history: Sequence[ModelMessage], turn: Sequence[ModelMessage]) -> bool:
    """The reply is made of the app's own words (its notes, or the request echoed back): see the module."""
    if len(_words(reply)) < ECHO_MIN_WORDS:
        return False
    written = app_notes(history)
    return _made_of_trigrams(reply, written, turn) or _restates_app_text(reply, written, history, turn)


def _made_of_trigrams(reply: str, written: list[tuple[str, list[str]]], turn: Sequence[ModelMessage]) -> bool:
    """Most of the reply's word trigrams are the notes' own or the request's (what a note quoted is neither)."""
    words = _words(reply)
    notes = {t for _, segments in written for segment in segments for t in _trigrams(segment)}
    quoted = {t for note, _ in written for t in _trigrams(note)} - notes
    trigrams = {tuple(words[i : i + 3]) for i in range(len(words) - 2)} - quoted  # the note quoted them
    asked = [_trigrams(text) for kind, text in _sources(turn) if kind == "user"]
    known = notes.union(*asked)
    if not trigrams or len(trigrams & known) < ECHO_SHARE * len(trigrams):
        return False
    # Made of the request alone, it must restate the request (nearly) whole: a part of it is what a
    # request to say or write something is answered with ("Say hello from X" → "hello from X").
    # It must add no word the request lacks either (``adds_nothing``): "Yes, …" answers the question.
    requests = [text for kind, text in _sources(turn) if kind == "user"]
    return bool(trigrams & notes) or any(
        len(r & trigrams) >= REQUEST_SHARE * len(r) and adds_nothing(reply, text)
        for r, text in zip(asked, requests, strict=True)
        if r
    )


def _restates_app_text(
    reply: str, written: list[tuple[str, list[str]]], history: Sequence[ModelMessage], turn: Sequence[ModelMessage]
) -> bool:
    """The reply restates a note's own words (``overlap.restates``: reordered, a few words dropped or
    changed), or (once an action worked in the turn) echoes the turn's request (``overlap.adds_nothing``:
    reordered, words dropped, none added) and is no run of its words (its quoted part); and it names
    nothing an output showed.

    The request only once an action worked: before, a question restated with its answer ("Was ist die
    Hauptstadt von Frankreich?" → "Die Hauptstadt von Frankreich ist Paris.") is, by its words, what a
    restatement with a word changed is; after, an answer names what the output showed."""
    worked = any(o.ran and not o.failed and not o.guarded for o in outcomes(turn))
    asked = [text for kind, text in _sources(turn) if kind == "user"] if worked else []
    notes = any(restates(reply, " ".join(segments)) for _, segments in written)
    request = any(adds_nothing(reply, t) for t in asked if not part_of(reply, t))
    return (notes or request) and not _names_an_output(reply, history, asked)


def _names_an_output(reply: str, history: Sequence[ModelMessage], asked: Sequence[str]) -> bool:
    """The reply has a word of an output (a number, or a mark word) that the request has not, or states
    a number an output holds in another form (``86,400`` for ``86400``)."""
    outputs = [text for kind, text in _sources(history) if kind == "output"]
    printed = set().union(*(overlap_words(t) for t in outputs)) - set().union(*(overlap_words(t) for t in asked))
    if any(w in printed and (len(w) >= MARK_LEN or any(ch.isdigit() for ch in w)) for w in overlap_words(reply)):
        return True
    written = [w for text in outputs for w in written_values(text)]
    shown = Grounds(written, (), aggregates(written))
    return any(s.significant and shown.holds(s, derived=False) for s in read_numbers(reply))


def _trigrams(text: str) -> set[tuple[str, ...]]:
    source = _words(text)
    return {tuple(source[i : i + 3]) for i in range(len(source) - 2)}


def _is_note(part: ToolReturnPart) -> bool:
    """A tool return the app wrote instead of an output: a broken call, a refused or rejected one."""
    step = StepRecord.of_part(part)
    return step.refused and step.outcome != "interrupted"


def _grounds(messages: Sequence[ModelMessage], operands: Sequence[float] = ()) -> Grounds:
    """The values ``messages`` showed: outputs of actions, and the user's own messages as given. What the
    model wrote itself — the code of its actions, their comments — and the app's notes count as neither:
    only what was shown to the model (an output, the request) grounds a number."""
    outputs: list[tuple[float, ...]] = []
    given: list[float] = [*operands]  # the factors of a printed result the reply explains
    wholes: list[float] = []
    for kind, text in _sources(messages):
        if kind == "output":
            written = list(written_values(text))
            outputs.extend(written)
            wholes.extend(aggregates(written))  # one output's total, mean, count
        elif kind == "user":
            given.extend(values(text))
    return Grounds(outputs, given, [*wholes, *aggregates(outputs)])  # and all outputs' together


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
    """The reply's numbers that no output of the turn, nor its request, holds or derives
    (``numbers.Grounds``: values, with a tolerance and the bounded derivations), nor the code of a run
    that printed another number of this reply has as an operand (``operands.py``: the factors of an
    explained result)."""
    stated = [s for s in read_numbers(reply) if s.significant]
    grounds = _grounds(turn)
    left = [s for s in stated if not grounds.holds(s)]
    if not left:
        return []
    held = [s for s in stated if s not in left]
    operands = [v for o in outcomes(turn) if _printed_any(o, held) for v in code_operands(o.code or "")]
    if operands:
        grounds = _grounds(turn, operands)
        left = [s for s in left if not grounds.holds(s)]
    return [s.text for s in left]


def _printed_any(action: Outcome, stated: Sequence[Stated]) -> bool:
    """The action ran, worked, and its output holds one of ``stated`` (no derivation)."""
    if not action.ran or action.failed or not stated:
        return False
    written = list(written_values(action.output))
    printed = Grounds(written, (), aggregates(written))
    return any(printed.holds(s, derived=False) for s in stated)


def unknown_numbers(reply: str, history: Sequence[ModelMessage]) -> list[str]:
    """The reply's numbers that no output or user message of ``history`` holds, derivations not counted:
    for a turn in which nothing worked (``1234 * 5678 = 7006652`` worked out in the head is no result)."""
    grounds = _grounds(history)
    return [s.text for s in read_numbers(reply) if s.significant and not grounds.holds(s, derived=False)]


__all__ = [
    "MARK_LEN",
    "OWN_SHARE",
    "borrows_app_words",
    "answers_nothing",
    "ECHO_MIN_WORDS",
    "ECHO_SHARE",
    "echoes_app_text",
    "unchecked_numbers",
    "unknown_numbers",
    "without_comments",
]
