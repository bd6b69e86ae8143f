"""Corrective nudges when a small model would end a turn without acting (``auto``/``text`` only).

Small models often answer a task they were asked to *do* without doing it: they claim results
no code produced ("The file has been created", "1234 * 5678 = 7006652"), show a block that does
not run (output in a bare fence), or send an empty reply. When such a reply would end a turn in
which nothing ran (an empty one: any turn), the agent tells the model what happened and lets it
act. A model that needs no action can answer.

The same holds after the turn's last action failed: what the reply then claims did not happen.

After an action that worked only four kinds of reply get one, as none is an answer: an empty one
(told to answer from the output); one that is word for word an earlier reply of the turn with an
action run since (it ignores that action's output: a small model restating its first reply); and,
in ``auto`` on tool calls, one that shows code to run and tells the user how to run it ("Here's how
you can do it: …") — told to answer from the output if it does, else to run the code; its blocks
then run like any reply to a nudge; and one that wraps text in the tags a chat template puts
around tool results (``<tool_response>``): it plays the tool instead of answering (#30).

Bounded: at most two nudges a turn, the second only after an action ran since the first (so
every nudge costs the model a step of its own); in ``tools`` (for models that call tools well: their
answers without actions are answers) only the rows about the app's own words (``OWN_WORDS_RULES``). The nudge is a plain user message
(freeact loads the session) whose request ``metadata`` says it is a nudge (``NUDGE_KEY``), and an
event for the log.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    UserPromptPart,
)

from freeact_tui.agent.policy.grounding import (
    answers_nothing,
    borrows_app_words,
    echoes_app_text,
    unchecked_numbers,
    unknown_numbers,
)
from freeact_tui.agent.policy.outcomes import acted, failure_not_redone, last_action_failed
from freeact_tui.agent.policy.text_protocol import code_blocks, fence_action, fences, reply_text, said
from freeact_tui.store.meta_keys import NUDGE_KEY
from freeact_tui.toolcalls import CODE_TOOL

_HOWTO = re.compile(
    r"\bhere(?:'|\u2019)?s\s+how\b|\byou\s+(?:can|could)\s+(?:use|do|run|try)\b"
    r"|\bthis\s+(?:code|script|command)\s+(?:will|should|would)\b|\bwhen\s+you\s+run\b",
    re.IGNORECASE,
)
"""Words of a reply that tells the user how to do the task (with code to run) instead of doing it."""
HOWTO_REASON = "the reply shows code to run instead of running it"
"""The nudge's reason for such a reply (``agent/nudge.py``)."""


def tells_how(response: ModelResponse) -> bool:
    """The reply has a runnable code block and tells the user how to run it ("Here's how you can do
    it: … This code will …"), as small models answer after a step that worked instead of taking the
    next one."""
    text = reply_text(response)
    return bool(_HOWTO.search(text)) and bool(code_blocks(text))


_TOOL_TAG = re.compile(r"</?tool_(?:response|result|output)>")
"""The tags a chat template (Qwen's, Hermes') wraps tool results in: a reply never has them."""
TOOL_TAG_REASON = "the reply repeats a tool output in the tool's tags instead of answering"


def plays_tool(response: ModelResponse) -> bool:
    """The reply has a tool result's tags (``<tool_response>…``): it copies or makes up a tool's output.

    Structural, in any language: #30 held-out word_count_de ("Wie viele Wörter stehen in brief.txt?")
    ended on the file's text inside ``<tool_response>`` tags, taken as the answer.
    """
    return bool(_TOOL_TAG.search(reply_text(response)))


def nudge_reason(message: ModelMessage) -> str | None:
    """Why ``message`` nudged the model (``agent/nudge.py``: a request whose metadata says so), else ``None``."""
    if (
        isinstance(message, ModelRequest)
        and isinstance(message.metadata, dict)
        and NUDGE_KEY in message.metadata
    ):
        return str(message.metadata[NUDGE_KEY])
    return None


def is_nudge(message: ModelMessage) -> bool:
    return nudge_reason(message) is not None


_CLAIM = re.compile(
    r"""
    \b(?:has|have|had)\s+(?:now\s+)?been\s+(?:successfully\s+)?
        (?:created|written|saved|updated|changed|modified|edited|deleted|removed|renamed|replaced|added|
           set|assigned|stored|run|executed|computed|calculated|counted|installed|printed)\b
    | \bI(?:'ve|\s+have)?\s+(?:now\s+|successfully\s+|already\s+)?
        (?:created|wrote|written|saved|updated|changed|modified|edited|deleted|removed|renamed|replaced|
           added|set|assigned|stored|ran|executed|computed|calculated|counted|installed|printed|listed)\b
    | \b(?:output|result)s?\s+(?:is|are|was|were|of|shows?)\b
    | \b(?:output|result)s?\s*:
    | \bthere\s+(?:are|is|were|was)\s+\d
    | <tool_(?:response|result|output)>
    """,
    re.IGNORECASE | re.VERBOSE,
)


@dataclass(frozen=True)
class NudgeReason:
    """Why a reply gets a nudge: ``log`` for the user's log, ``told`` for the model."""

    log: str
    told: str


def _turn_requests(turn: Sequence[ModelMessage]) -> Iterator[ModelRequest]:
    return (m for m in turn if isinstance(m, ModelRequest))


def answers_nudge(response: ModelResponse, turn: Sequence[ModelMessage]) -> bool:
    """The reply (``turn[-1]``) answers a nudge: the agent told the model to act.

    Not a reply that, told it showed code instead of running it, again tells how (with the answer
    now, as a small model does: "The result is 145. … Here's how you can do it: …"): that is the answer.
    """
    reason = nudge_reason(turn[-2]) if len(turn) >= 2 else None
    return reason is not None and not (reason == HOWTO_REASON and tells_how(response))


REDO_REASON = "the code that failed has not run again since (only shell steps ran)"

MAX_NUDGES = 2
"""Nudges a turn may get; the second only after an action ran since the first."""


def nudged(turn: Sequence[ModelMessage]) -> bool:
    """Whether the turn had a nudge."""
    return any(is_nudge(m) for m in turn)


def may_nudge(turn: Sequence[ModelMessage]) -> bool:
    """Whether the turn may get another nudge: none yet, or fewer than ``MAX_NUDGES`` and an action since the last."""
    at = [i for i, m in enumerate(turn) if is_nudge(m)]
    if not at:
        return True
    return len(at) < MAX_NUDGES and acted(turn[at[-1] + 1 :])


def repeats_earlier_reply(response: ModelResponse, turn: Sequence[ModelMessage]) -> bool:
    """The reply (``turn[-1]``) is word for word an earlier reply of the turn, and an action ran since that one.

    It then ignores what the action showed (small models restate the reply that made the action).
    """
    text = reply_text(response).strip()
    if not text:
        return False
    for k in range(len(turn) - 2, -1, -1):
        earlier = turn[k]
        if isinstance(earlier, ModelResponse) and reply_text(earlier).strip() == text:
            return acted(turn[k + 1 : -1])
    return False


@dataclass(frozen=True)
class NudgeCase:
    """What the nudge rules read: the reply, the history and the turn, and what the turn's actions did."""

    response: ModelResponse
    history: Sequence[ModelMessage]
    turn: Sequence[ModelMessage]
    text_mode: bool
    failed: bool = False
    """The turn's last action failed."""
    redo: bool = False
    """Only shell steps (an install) ran since the Python code that failed: its result is unknown."""
    worked: bool = False
    """An action ran, the last one did not fail, and no failed code waits to run again."""

    @property
    def text(self) -> str:
        return reply_text(self.response).strip()

    @classmethod
    def of(
        cls,
        response: ModelResponse,
        history: Sequence[ModelMessage],
        turn: Sequence[ModelMessage],
        *,
        text_mode: bool,
    ) -> NudgeCase:
        failed = last_action_failed(turn)
        redo = not failed and failure_not_redone(turn)  # structural: a shell step after failed Python code
        worked = acted(turn) and not failed and not redo
        return cls(response, history, turn, text_mode, failed, redo, worked)


def _empty(case: NudgeCase) -> bool:
    return not said(case.text) and not any(isinstance(p, ToolCallPart) for p in case.response.parts)


def _shows_unrun_block(case: NudgeCase) -> bool:
    return any(fence_action(f) is None for f in fences(case.text))


def _claims(case: NudgeCase) -> bool:
    return bool(_CLAIM.search(case.text))


def _unknown_number(case: NudgeCase) -> bool:
    return bool(unknown_numbers(case.text, case.history))


def _then_act(case: NudgeCase) -> str:
    return f"{_act(case.text_mode)[0].lower()}{_act(case.text_mode)[1:]}"


EMPTY = NudgeReason("the reply was empty", "your reply was empty")
AGAIN = NudgeReason(
    "the reply repeats an earlier one and ignores the output since",
    "that is your previous reply again: it does not use the output of your code",
)
HOWTO = NudgeReason(HOWTO_REASON, "you told me how to do it instead of doing it")
ECHO = NudgeReason(TOOL_TAG_REASON, "your reply repeats the tool's output instead of answering")
REDO = NudgeReason(REDO_REASON, "you do not know the result: your code failed and has not run again since")
UNRUN = NudgeReason("the reply shows a code block that did not run", "the block in your reply did not run")
CLAIM = NudgeReason("the reply claims results no action produced", "what your reply states did not happen")
NUMBER = NudgeReason("the reply states a result that no code computed", "you do not know the result")
OWN_WORDS = NudgeReason(
    "the reply is the app's own words or the request, not an answer",
    "your reply repeats my words or the app's notes instead of answering",
)
UNRELATED = NudgeReason(
    "the reply refers to nothing of the request, an output or the session",
    "your reply uses nothing of my request or of what your code showed",
)
CHECK = NudgeReason(
    "the reply states numbers no output of the turn shows", "numbers in your reply appear in no output"
)


def _asked(reason: NudgeReason, turn: Sequence[ModelMessage]) -> bool:
    """The turn had a nudge for ``reason`` already."""
    return any(nudge_reason(m) == reason.log for m in turn)


def _echoes(case: NudgeCase) -> bool:
    """The app's own words: echoed (trigrams), or its note's words restated (``borrows_app_words``)."""
    return echoes_app_text(case.text, case.history, case.turn) or borrows_app_words(
        case.text, case.history, case.turn
    )


def _unrelated(case: NudgeCase) -> bool:
    """Not after the turn was asked about its own words or numbers (asked once a turn: its row's ``once``)."""
    asked = any(_asked(r, case.turn) for r in (OWN_WORDS, CHECK))
    return not asked and answers_nothing(case.text, case.history, case.turn)


def _unchecked(case: NudgeCase) -> bool:
    return case.worked and bool(unchecked_numbers(case.text, case.turn))


def _check_text(case: NudgeCase) -> str:
    numbers = ", ".join(unchecked_numbers(case.text, case.turn)[:5])
    return (
        f"These numbers in your reply appear in no output of your code: {numbers}. Check them against "
        "the output above and answer with what it shows, or run code that computes them."
    )


@dataclass(frozen=True)
class NudgeRule:
    """One row of the nudge table: when it applies (by the reply's content only), why (for the log and
    the model), what the model is told, and what becomes of the reply when no nudge is left for it."""

    applies: Callable[[NudgeCase], bool]
    reason: NudgeReason
    message: Callable[[NudgeCase], str]
    once: bool = False
    """It asks once a turn: a second such reply is not nudged for it again."""
    answer: bool = True
    """When no nudge is left for it (``may_nudge``'s bound, or ``once``), the reply may end the turn as
    its answer (a claim or a number may be right after all). ``False``: such a reply is never an answer
    (the app's own words): the turn stops instead (``NoAnswer``)."""


@dataclass(frozen=True)
class NoAnswer:
    """A reply that is never an answer, with no nudge left for it: the turn stops (``stalled``)."""

    reason: NudgeReason

    @property
    def message(self) -> str:
        return (
            f"The turn stopped: the model's reply is not an answer ({self.reason.log}), and it was asked "
            "again already. To go on, rephrase the request, or try another model."
        )


def _states(reason: NudgeReason, condition: Callable[[NudgeCase], bool]) -> NudgeRule:
    """A rule about what a reply states, asked only when nothing worked in the turn."""
    return NudgeRule(
        lambda c: not c.worked and condition(c),
        reason,
        lambda c: nudge_text(reason, text_mode=c.text_mode, failed=c.failed),
    )


EMPTY_RULE = NudgeRule(_empty, EMPTY, lambda c: _empty_text(text_mode=c.text_mode, worked=c.worked))
UNRUN_RULE = _states(UNRUN, _shows_unrun_block)
CLAIM_RULE = _states(CLAIM, _claims)
NUMBER_RULE = _states(NUMBER, _unknown_number)

OWN_WORDS_RULE = NudgeRule(
    _echoes,
    OWN_WORDS,
    lambda c: f"{_capital(OWN_WORDS.told)}. {_ANSWER if c.worked else 'Answer my request.'}",
    once=True,
    answer=False,
)
UNRELATED_RULE = NudgeRule(
    _unrelated,
    UNRELATED,
    lambda c: f"{_capital(UNRELATED.told)}. {_ANSWER if c.worked else 'Answer my request.'}",
    once=True,
)
OWN_WORDS_RULES: tuple[NudgeRule, ...] = (OWN_WORDS_RULE, UNRELATED_RULE)
"""The rows that hold in every protocol, ``tools`` too (``nudge_for(..., rules=OWN_WORDS_RULES)``): a
reply made of the app's own words, or one that answers nothing after the app's note, is no answer
whatever the model's skill at tool calls."""

NUDGE_RULES: tuple[NudgeRule, ...] = (
    EMPTY_RULE,
    NudgeRule(
        lambda c: repeats_earlier_reply(c.response, c.turn),
        AGAIN,
        lambda c: f"{_capital(AGAIN.told)}. {_ANSWER}",
    ),
    OWN_WORDS_RULE,
    # "If the output above already answers my request, answer with it" made the model say just that
    # ("The output above already answers my request.").
    NudgeRule(
        lambda c: c.worked and not c.text_mode and tells_how(c.response),
        HOWTO,
        lambda c: (
            "You told me how to do it instead of doing it. If the output above has what my request asks "
            f"for, write the answer from it. Else {_then_act(c)}"
        ),
    ),
    NudgeRule(
        lambda c: c.worked and plays_tool(c.response),
        ECHO,
        lambda c: (
            "Your reply repeats the tool's output instead of answering. If the output above has what my "
            f"request asks for, write the answer from it. Else {_then_act(c)}"
        ),
    ),
    NudgeRule(lambda c: c.redo, REDO, lambda c: f"{_capital(REDO.told)}. {_act(c.text_mode)}"),
    UNRUN_RULE,
    CLAIM_RULE,
    NUMBER_RULE,
    NudgeRule(_unchecked, CHECK, _check_text, once=True),
    UNRELATED_RULE,
)
"""The nudge rules, in order: the first that applies to a reply that would end the turn gives its nudge.

Structural rows first (an empty reply, a reply repeated, the app's own words echoed, a failure not
redone); the rows about what a reply states apply only when nothing worked in the turn; then numbers
no output of a turn that worked shows (asked once); last, a reply that refers to nothing the user, an
output or an earlier answer said, right after a note of the app (``grounding.answers_nothing``, asked
once). A row's condition reads the reply only; the nudge budget (``may_nudge``, ``once``) is applied
after it, in ``nudge_for``, so that a budget never lets a reply that is no answer (``answer=False``)
end the turn as one. ``tests/fast/agent/test_reply_policy.py`` has a row for each.
"""


def _capital(text: str) -> str:
    return f"{text[0].upper()}{text[1:]}"


def reason_for(response: ModelResponse, history: Sequence[ModelMessage]) -> NudgeReason | None:
    """Why this reply, ending a turn in which nothing ran (or the last action failed), should not end it.

    ``None``: it may end it. The rows of ``NUDGE_RULES`` about what a reply states, read for a turn in
    which nothing worked: it is empty; it has a fenced block that does not run; it claims results or
    changes; it states a number (two or more digits) that is in no user message and no output.
    """
    if any(isinstance(p, ToolCallPart) for p in response.parts):
        return None
    case = NudgeCase(response, history, (), text_mode=False)
    for rule in (EMPTY_RULE, UNRUN_RULE, CLAIM_RULE, NUMBER_RULE):
        if rule.applies(case):
            return rule.reason
    return None


def nudge_text(reason: NudgeReason, *, text_mode: bool, failed: bool = False) -> str:
    """What the model is told (stored as a user message whose request metadata marks it as a nudge)."""
    # Short and direct: offered a way out ("answer if no code is needed"), small models take it.
    if failed:
        return f"Your last action failed, so {reason.told}. {_act(text_mode)}"
    return f"You did not run any code for my last request, so {reason.told}. {_act(text_mode)}"


def _act(text_mode: bool) -> str:
    if text_mode:
        return "Write the code in a ```python block now: it will run."
    return f"Call `{CODE_TOOL}` now with the code."


def nudge_for(
    response: ModelResponse,
    history: Sequence[ModelMessage],
    turn: Sequence[ModelMessage],
    *,
    text_mode: bool,
    rules: Sequence[NudgeRule] = NUDGE_RULES,
) -> tuple[NudgeReason, str, ModelRequest] | NoAnswer | None:
    """The nudge for a reply that would end the turn (recorded as ``history[-1]``), if it gets one.

    Asked in ``auto`` and ``text`` only (``ReplyPolicy``): the first row of ``NUDGE_RULES`` whose
    condition holds and that has a nudge left (``may_nudge``; a ``once`` row not asked yet). A row whose
    condition holds but that has no nudge left: ``NoAnswer`` when the reply is never an answer, else the
    next row. ``None``: the reply is the answer. ``turn``: the turn's messages (the end of ``history``).
    """
    left = may_nudge(turn)
    case = NudgeCase.of(response, history, turn, text_mode=text_mode)
    for rule in rules:
        if not rule.applies(case):
            continue
        if left and not (rule.once and _asked(rule.reason, turn)):
            return rule.reason, *_request(rule.reason, rule.message(case))
        if not rule.answer:
            return NoAnswer(rule.reason)
    return None


def _request(reason: NudgeReason, told: str) -> tuple[str, ModelRequest]:
    return told, ModelRequest(parts=[UserPromptPart(told)], metadata={NUDGE_KEY: reason.log})


_ANSWER = "Answer my request with what the output shows."


def _empty_text(*, text_mode: bool, worked: bool) -> str:
    if (
        worked
    ):  # most often the model has what it needs: tried on Qwen2.5-Coder-1.5B, "go on" made it ask for code
        step = "a ```python block" if text_mode else "a tool call"
        return f"Your reply was empty. Use the output above to answer my request, or go on with {step} if it is not done."
    return f"Your reply was empty. If my request is not done, go on: {_act(text_mode)} Else answer it."


__all__ = [
    "HOWTO_REASON",
    "REDO_REASON",
    "TOOL_TAG_REASON",
    "NUDGE_KEY",
    "answers_nudge",
    "is_nudge",
    "last_action_failed",
    "nudge_reason",
    "tells_how",
    "NUDGE_RULES",
    "OWN_WORDS_RULES",
    "NoAnswer",
    "NudgeCase",
    "NudgeReason",
    "NudgeRule",
    "MAX_NUDGES",
    "acted",
    "may_nudge",
    "nudge_for",
    "nudge_text",
    "nudged",
    "plays_tool",
    "reason_for",
    "repeats_earlier_reply",
]
