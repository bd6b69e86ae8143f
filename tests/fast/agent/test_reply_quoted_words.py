"""#45 leftover (model9): what a note of the app QUOTED is not the app's own words, whatever the order of
the nudges.

The number check quotes the reply's numbers ("These numbers in your reply appear in no output of your
code: 10,982,432. …"). A reply repeated after it stopped the turn as "the app's own words" — the model's
own numbers counted as the app's — while the same reply after a "you did not run any code" nudge was
the answer. Class: text the app quoted (from the model, an output, the request) counted as the app's.
Mechanism: ``grounding.app_notes`` reads each note as its own words with what it quoted of an earlier
text of someone else left out (``quoting.own_segments``), for every own-words check.

Generated: replies (languages, numbers) and every order of the same nudges → the same end reason; and
the reverse: the note's own words echoed back stay no answer in every order (the fix is not leniency).
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage

from freeact_tui.agent.policy.nudge import CHECK, CLAIM, EMPTY, NUMBER, NudgeCase, NudgeReason, nudge_text
from freeact_tui.agent.policy.nudge import _check_text as check_text
from freeact_tui.agent.policy.quoting import Quotable, own_segments
from freeact_tui.agent.policy.reply import FinalAnswer, NotAnAnswer, reply_policy
from tests.fast.agent.test_reply_policy import TOOLS, block_step, nudge, prompt, reply, tool_step

SCENES = [  # (request, code, its wrong output, the reply's frame around a made-up number)
    ("Wie viele Sekunden hat ein Tag?", "print(24*60*60*138.57)", "11972808.0", "Ein Tag hat {} Sekunden."),
    ("How many seconds are in a day?", "print(24*60*61)", "87840", "A day has {} seconds."),
    ("Combien de secondes dans une journée ?", "print(24*3600*1.5)", "129600.0", "Une journée compte {} secondes."),
    ("一天有多少秒？", "print(24*60*59)", "84960", "一天有{}秒。"),
]
MADE_UP = st.integers(10_000, 99_999_999).map(lambda n: f"{n:,}")


def _decide(mode: str, turn: list[ModelMessage], text: str) -> Any:
    return reply_policy(mode).decide(reply(text), turn, turn, TOOLS)  # type: ignore[arg-type]


def _nudge_text(reason: NudgeReason, answer: str, turn: list[ModelMessage], text_mode: bool) -> str:
    """What the app tells the model for ``reason`` (the real texts; the number check quotes the reply)."""
    if reason == CHECK:
        return check_text(NudgeCase.of(reply(answer), turn, turn, text_mode=text_mode))
    if reason == EMPTY:
        return "Your reply was empty. Use the output above to answer my request."
    return nudge_text(reason, text_mode=text_mode)


def _turn(scene: int, mode: str, answer: str, nudges: tuple[NudgeReason, ...], act_at: int) -> list[ModelMessage]:
    """The request, the action at ``act_at`` (before the last nudge), and each nudge after the same reply."""
    request, code, output, _ = SCENES[scene]
    step = block_step(code, output) if mode == "text" else tool_step(code, output)
    turn: list[ModelMessage] = [prompt(request)]
    for at, reason in enumerate(nudges):
        if at == act_at:
            turn += step
        told = _nudge_text(reason, answer, [*turn, reply(answer)], mode == "text")
        turn += [reply(answer), nudge(told, reason.log)]
    return turn


NUDGE_SETS = [(CHECK,), (CHECK, NUMBER), (CHECK, CLAIM), (CHECK, EMPTY), (NUMBER, CLAIM), (NUMBER,)]


@settings(max_examples=60, deadline=None)
@given(
    scene=st.integers(0, len(SCENES) - 1),
    mode=st.sampled_from(["auto", "text", "tools"]),
    made_up=MADE_UP,
    nudges=st.sampled_from(NUDGE_SETS),
    act=st.integers(0, 1),
)
def test_every_order_of_the_same_nudges_ends_the_same_way(
    scene: int, mode: str, made_up: str, nudges: tuple[NudgeReason, ...], act: int
) -> None:
    """The model's own reply, repeated after the nudges in any order, is the answer (each row asked once)."""
    answer = SCENES[scene][3].format(made_up)
    ends = {
        type(_decide(mode, _turn(scene, mode, answer, order, min(act, len(order) - 1)), answer)).__name__
        for order in itertools.permutations(nudges)
    }
    assert ends == {FinalAnswer.__name__}, (answer, nudges, ends)


@settings(max_examples=40, deadline=None)
@given(scene=st.integers(0, len(SCENES) - 1), mode=st.sampled_from(["auto", "text"]), made_up=MADE_UP)
def test_the_number_checks_own_words_echoed_stay_no_answer_in_every_order(scene: int, mode: str, made_up: str) -> None:
    answer = SCENES[scene][3].format(made_up)
    for order in itertools.permutations((CHECK, NUMBER)):
        turn = _turn(scene, mode, answer, order, 0)
        told = str(next(m.parts[0].content for m in reversed(turn) if "appear in no output" in str(m.parts[0].content)))  # type: ignore[union-attr]
        assert isinstance(_decide(mode, turn, told), NotAnAnswer), (order, told)


def test_a_quote_is_a_run_of_another_texts_words_or_a_number() -> None:
    quotable = Quotable()
    quotable.add("The day has 10,982,432 seconds.")
    quotable.add("NameError: name 'x' is not defined")
    note = "These numbers appear in no output: 10,982,432. This failed (NameError: name 'x' is not defined). Check the day."
    assert own_segments(note, quotable) == [
        "these numbers appear in no output",
        "this failed",
        "check the day",
    ]
