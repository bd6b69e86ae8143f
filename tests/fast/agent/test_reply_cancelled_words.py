"""#45 (model-fault attacker, round 6): what the user CANCELLED is not what grounds the next answer.

The tester cancelled "List the files in the project directory." and asked "What is the capital of
France?"; the reply "Here are the files in the project directory listing: …" was taken as the answer
(the cancelled request's words counted as said), and so was the module's own German cancel note with
words of the cancelled request. ``grounding._sources`` now reads a cancelled request as ``cancelled``,
neither said nor given: a reply that draws on it and not on the new request is asked once, in every
protocol (kernel-free).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart

from freeact_tui.agent.policy.grounding import unchecked_numbers
from freeact_tui.agent.policy.nudge import OWN_WORDS, UNRELATED
from freeact_tui.agent.policy.reply import FinalAnswer, NudgeModel
from freeact_tui.store.prompt_record import CANCELLED_NOTE, CUT_KEY
from tests.fast.agent.test_reply_own_words import QUESTIONS
from tests.fast.agent.test_reply_policy import Row, decide, prompt, reply, tool_step

CANCELLED_REQUESTS = [
    "List the files in the project directory.",
    "Summarise the README and the changelog of this repository.",
    "Zeige alle Dateien im Projektverzeichnis und ihre Größen.",
    "Liste les fichiers du répertoire du projet avec leur taille.",
    "Muestra los archivos del directorio del proyecto.",
    "Count the words in every markdown document under docs.",
]
PROTOCOLS = ["tools", "auto", "text"]


def _scene(cancelled: str, question: str) -> tuple[list[ModelMessage], list[ModelMessage]]:
    earlier = [
        prompt(cancelled),
        ModelResponse(parts=[TextPart(CANCELLED_NOTE)], metadata={CUT_KEY: "cancelled"}),
    ]
    return earlier, [prompt(question)]


def _decide(protocol: str, earlier: list[ModelMessage], turn: list[ModelMessage], text: str) -> object:
    return decide(Row("", protocol, turn, reply(text), FinalAnswer, earlier=earlier))


def _asked(decision: object) -> bool:
    return isinstance(decision, NudgeModel) and decision.reason in (UNRELATED, OWN_WORDS)


@st.composite
def drawing_on(draw: st.DrawFn, cancelled: str) -> str:
    """A reply made of the cancelled request's words (most of them, shuffled) and a file name or two."""
    words = list(dict.fromkeys(re.findall(r"\w+", cancelled)))
    kept = draw(
        st.lists(
            st.sampled_from(words), min_size=max(4, len(words) * 2 // 3), max_size=len(words), unique=True
        )
    )
    names = draw(st.lists(st.sampled_from(["notes.txt", "data.csv", "main.py", "x.md"]), max_size=2))
    return " ".join(draw(st.permutations([*kept, *names]))) + "."


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    protocol=st.sampled_from(PROTOCOLS),
    cancelled=st.sampled_from(CANCELLED_REQUESTS),
    lang=st.sampled_from(sorted(QUESTIONS)),
)
def test_a_reply_drawing_on_the_cancelled_request_is_asked_once(
    data: st.DataObject, protocol: str, cancelled: str, lang: str
) -> None:
    earlier, turn = _scene(cancelled, QUESTIONS[lang][0])
    text = data.draw(drawing_on(cancelled))
    first = _decide(protocol, earlier, turn, text)
    assert _asked(first), (protocol, text)
    assert isinstance(first, NudgeModel)
    again = _decide(protocol, earlier, [*turn, reply(text), first.request], text)
    assert isinstance(again, FinalAnswer)  # asked once: the second such reply is the answer


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("cancelled", CANCELLED_REQUESTS)
@pytest.mark.parametrize("lang", sorted(QUESTIONS))
def test_an_answer_to_the_new_request_is_the_answer(protocol: str, cancelled: str, lang: str) -> None:
    question, answer = QUESTIONS[lang]
    earlier, turn = _scene(cancelled, question)
    assert isinstance(_decide(protocol, earlier, turn, answer), FinalAnswer)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    "text",
    [
        "Here are the files in the project directory listing: notes.txt and data.csv, nothing else.",
        "Der Benutzer hat die vorherige Anfrage abgebrochen. Ich warte auf … Projektverzeichnis "
        "(project directory files).",
    ],
)
def test_the_testers_replies_after_a_cancel_are_asked(protocol: str, text: str) -> None:
    earlier, turn = _scene("List the files in the project directory.", "What is the capital of France?")
    assert _asked(_decide(protocol, earlier, turn, text))


def test_a_cancelled_requests_numbers_ground_nothing() -> None:
    earlier, _ = _scene("Multiply 48213 by 7.", "What is 6 * 7?")
    turn = [*earlier, prompt("What is 6 * 7?"), *tool_step("print(6 * 7)", "42")]
    assert unchecked_numbers("It is 42, not 48213.", turn) == ["48213"]
