"""#45 (model-fault attacker, round 6): the app's own words are no answer in EVERY protocol, ``tools``
too, and a paraphrase of the app's note that borrows words of the request is its words still.

The tester's ``g_echo_verbatim`` (tools: the broken-call notice word for word, exit 0) and
``g_paraphrase`` ("Please call the tool again with valid JSON arguments so it can compute how many
seconds.": two prompt words passed ``answers_nothing``). Generated here: replies made of a note's words
(shuffled, subsets) with words of the request inserted, in the languages the other tests use, against
real answers in the same scenes — decided by overlap (``grounding.borrows_app_words``), no phrase read.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage

from freeact_tui.agent.policy.nudge import OWN_WORDS, UNRELATED
from freeact_tui.agent.policy.reply import FinalAnswer, NotAnAnswer, NudgeModel
from freeact_tui.store.prompt_record import CANCELLED_NOTE
from freeact_tui.toolcalls import CODE_TOOL
from tests.fast.agent.test_reply_own_words import CANCELLED, DAY, QUESTIONS
from tests.fast.agent.test_reply_policy import Row, broken, decide, guarded_step, prompt, reply, tool_step

BROKEN_NOTE = (
    f"Invalid JSON arguments for `{CODE_TOOL}`: EOF while parsing a string at line 1 column 22. "
    "Call it again with valid JSON arguments."
)
ERROR = "NameError: name 'x' is not defined"
GUARD_NOTE = f"This is the code that just failed ({ERROR}). Do not repeat it: change it to fix the cause."


def _broken(question: str) -> tuple[list[ModelMessage], list[ModelMessage]]:
    return [], [prompt(question), *broken(told=BROKEN_NOTE)]


def _refused(question: str) -> tuple[list[ModelMessage], list[ModelMessage]]:
    return [], [
        prompt(question),
        *tool_step("print(x)", ERROR, "error", "c0"),
        *guarded_step("print(x)", ERROR, "c1"),
    ]


def _cancelled(question: str) -> tuple[list[ModelMessage], list[ModelMessage]]:
    return CANCELLED, [prompt(question)]


SCENES = {
    "broken call": (_broken, BROKEN_NOTE),
    "refused call": (_refused, GUARD_NOTE),
    "cancel": (_cancelled, CANCELLED_NOTE),
}
PROTOCOLS_OF = {
    "broken call": ["tools", "auto"],
    "refused call": ["auto"],
    "cancel": ["tools", "auto", "text"],
}
CASES = [(scene, protocol) for scene, protocols in PROTOCOLS_OF.items() for protocol in protocols]
PROMPTS = {**{k: v[0] for k, v in QUESTIONS.items()}, **{f"day-{k}": v[0] for k, v in DAY.items()}}


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


@st.composite
def paraphrase(draw: st.DrawFn, note: str, question: str) -> str:
    """Two thirds or more of the note's different words, shuffled, with up to three words of the request put in between."""
    words = list(dict.fromkeys(_words(note)))
    size = len(words) * 2 // 3
    kept = draw(st.lists(st.sampled_from(words), min_size=size, max_size=len(words), unique=True))
    asked = _words(question)
    inserted = draw(st.lists(st.sampled_from(asked), max_size=3)) if asked else []
    for word in inserted:
        kept.insert(draw(st.integers(0, len(kept))), word)
    return " ".join(draw(st.permutations(kept))) + "."


def _decide(protocol: str, earlier: list[ModelMessage], turn: list[ModelMessage], text: str) -> object:
    return decide(Row("", protocol, turn, reply(text), FinalAnswer, earlier=earlier))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), case=st.sampled_from(CASES), lang=st.sampled_from(sorted(PROMPTS)))
def test_the_apps_note_restated_with_request_words_is_never_the_answer(
    data: st.DataObject, case: tuple[str, str], lang: str
) -> None:
    scene, protocol = case
    make, note = SCENES[scene]
    earlier, turn = make(PROMPTS[lang])
    text = data.draw(paraphrase(note, PROMPTS[lang]))
    decision = _decide(protocol, earlier, turn, text)
    assert isinstance(decision, NudgeModel) and decision.reason in (OWN_WORDS, UNRELATED), (protocol, text)


ANSWERS = list(QUESTIONS.values())  # no number: nothing ran in these scenes


@pytest.mark.parametrize(("question", "answer"), ANSWERS, ids=[a for _, a in ANSWERS])
@pytest.mark.parametrize("case", CASES, ids=[f"{s}-{p}" for s, p in CASES])
def test_a_real_answer_is_the_answer_in_every_protocol(
    case: tuple[str, str], question: str, answer: str
) -> None:
    scene, protocol = case
    earlier, turn = SCENES[scene][0](question)
    assert isinstance(_decide(protocol, earlier, turn, answer), FinalAnswer)


def test_the_testers_paraphrase_is_asked_in_every_protocol() -> None:
    """g_paraphrase: "many" and "seconds" are the request's; the rest is the broken-call notice's."""
    text = "Please call the tool again with valid JSON arguments so it can compute how many seconds."
    for protocol in ("tools", "auto"):
        earlier, turn = _broken("How many seconds are in a day?")
        decision = _decide(protocol, earlier, turn, text)
        assert isinstance(decision, NudgeModel) and decision.reason == OWN_WORDS, protocol


def test_the_notice_word_for_word_in_tools_is_asked_once_then_stops_the_turn() -> None:
    """g_echo_verbatim (tools): the notice as the reply ended the turn as its answer (exit 0)."""
    earlier, turn = _broken("How many seconds are in a day?")
    first = _decide("tools", earlier, turn, BROKEN_NOTE)
    assert isinstance(first, NudgeModel) and first.reason == OWN_WORDS
    turn = [*turn, reply(BROKEN_NOTE), first.request]
    assert isinstance(_decide("tools", earlier, turn, BROKEN_NOTE), NotAnAnswer)


@pytest.mark.parametrize("mode", ["tools", "auto", "text"])
@pytest.mark.parametrize(
    ("request_text", "answer"),
    [
        ("Say hello from the subagent.", "hello from the subagent"),
        ("Write the words good morning to you all.", "good morning to you all"),
        ("Sag bitte guten Morgen an alle Leute.", "guten Morgen an alle Leute"),
    ],
)
def test_a_part_of_the_request_is_how_a_request_to_say_something_is_answered(
    mode: str, request_text: str, answer: str
) -> None:
    """Made of the request's words alone, a reply is an echo only when it restates the request nearly
    whole; "say X" is answered with X (a subagent told "Say hello from the subagent." was asked again)."""
    assert isinstance(decide(Row("ACP subagent test", mode, [prompt(request_text)], reply(answer), FinalAnswer)), FinalAnswer)
    restated = decide(Row("restated", mode, [prompt(request_text)], reply(request_text), NudgeModel))
    assert not isinstance(restated, FinalAnswer)
