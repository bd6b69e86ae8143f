"""#40 (hostile tester): a rule's budget never lets a reply that is no answer end the turn as one.

The tester's model echoed the app's own nudge right after it; ``may_nudge`` (no second nudge without an
action since) returned before the own-words rule looked, so the app's words became the final answer.
Every row of ``NUDGE_RULES`` is read here with its budget spent (no nudge left in the turn): a row that
is never an answer (``answer=False``) stops the turn, every other row lets the reply be the answer
(kernel-free)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart

from freeact_tui.agent.policy.nudge import NUDGE_RULES, OWN_WORDS, nudge_text
from freeact_tui.agent.policy.reply import FinalAnswer, NotAnAnswer, NudgeModel, reply_policy
from tests.fast.agent.test_reply_policy import ROWS, TOOLS, Row, block_step, nudge, prompt, reply


def decide(
    mode: str, turn: list[ModelMessage], answer: ModelResponse, earlier: list[ModelMessage] | None = None
) -> Any:
    policy = reply_policy(mode)  # type: ignore[arg-type]
    return policy.decide(answer, [*(earlier or []), *turn], turn, TOOLS)


def spent(turn: list[ModelMessage]) -> list[ModelMessage]:
    """``turn`` with the nudge budget spent: two nudges, no action since the last."""
    return [
        *turn,
        ModelResponse(parts=[TextPart("…")]),
        nudge("Go on.", "an earlier nudge"),
        ModelResponse(parts=[TextPart("…")]),
        nudge("Go on.", "another earlier nudge"),
    ]


NUDGED_ROWS: list[Row] = [
    r for r in ROWS if isinstance(decide(r.mode, r.turn, r.reply, r.earlier), NudgeModel)
]


@pytest.mark.parametrize("row", NUDGED_ROWS, ids=[r.case for r in NUDGED_ROWS])
def test_with_the_budget_spent_a_reply_is_the_answer_unless_it_is_never_one(row: Row) -> None:
    reason = decide(row.mode, row.turn, row.reply, row.earlier).reason
    rule = next(r for r in NUDGE_RULES if r.reason == reason)
    decision = decide(row.mode, spent(row.turn), row.reply, row.earlier)
    if rule.answer:  # the answer (or, in ``auto``, the blocks of a reply to a nudge run)
        assert not isinstance(decision, NudgeModel | NotAnAnswer), (row.case, decision)
    else:
        assert isinstance(decision, NotAnAnswer), (row.case, decision)


def test_the_rows_that_are_never_an_answer() -> None:
    assert [r.reason for r in NUDGE_RULES if not r.answer] == [OWN_WORDS]


@pytest.mark.parametrize("mode", ["auto", "text"])
def test_the_apps_nudge_echoed_right_after_it_is_not_the_answer(mode: str) -> None:
    """The tester's trace: a reply with no action, nudged; the next reply is the nudge itself."""
    told = nudge_text(OWN_WORDS, text_mode=mode == "text")
    turn: list[ModelMessage] = [
        prompt("What is 1234 * 5678?"),
        reply("The answer is 7006652."),
        nudge(told, "the reply claims results no action produced"),
    ]
    decision = decide(mode, turn, reply(told))
    assert isinstance(decision, NotAnAnswer), decision
    assert "not an answer" in decision.message


@pytest.mark.parametrize("mode", ["auto", "text"])
def test_own_words_after_their_one_nudge_stop_the_turn(mode: str) -> None:
    """The own-words row asks once; the same kind of reply again is not taken as the answer."""
    own = "Zähle die Wörter in brief.txt und nenne mir die Zahl."
    told = "Your reply repeats my words or the app's notes instead of answering. Answer my request."
    turn: list[ModelMessage] = [
        prompt(own),
        *block_step("print(len(open('brief.txt').read().split()))", "12"),
        reply(own),
        nudge(told, OWN_WORDS.log),
        *block_step("print(len(open('brief.txt').read().split()) + 0)", "12"),
    ]
    assert isinstance(decide(mode, turn, reply(told)), NotAnAnswer)


def test_a_real_answer_with_the_budget_spent_is_still_the_answer() -> None:
    turn = spent([prompt(), *block_step("print(1234 * 5678)", "7006652")])
    assert isinstance(decide("text", turn, reply("1234 * 5678 = 7006652.")), FinalAnswer)
