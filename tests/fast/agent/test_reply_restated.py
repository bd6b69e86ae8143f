"""#45 leftover (model9): a restated request or a paraphrased app note is no answer, in any language.

The own-words check read word trigrams: words reordered, a few changed, another case or punctuation,
and the request or the app's note passed as the answer. Class: a restatement of what the app sent (the
request, a note) judged by its word order. Mechanism (``overlap.restates``, used by
``grounding.echoes_app_text``): word multisets, the words shared at least ``RESTATE_SHARE`` of the
longer text — language-independent, no phrase read. The request is compared once an action worked
(before, a question restated with its answer is, by its words, a restatement); a reply naming what an
output showed is an answer.

Generated: paraphrases (shuffled, up to a fifth of the words dropped or replaced, case changed) of
requests in several languages and of the app's notes are asked once; genuine answers that quote a few
words of the request are the answer.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage

from freeact_tui.agent.policy.nudge import OWN_WORDS
from freeact_tui.agent.policy.overlap import part_of, restates
from freeact_tui.agent.policy.reply import FinalAnswer, NudgeModel, reply_policy
from freeact_tui.store.prompt_record import CANCELLED_NOTE
from tests.fast.agent.test_reply_own_words import CANCELLED
from tests.fast.agent.test_reply_policy import TOOLS, nudge, prompt, reply, tool_step

REQUESTS = [
    "Count the lines of every Python file in the src folder and tell me the total.",
    "Zähle die Zeilen aller Python-Dateien im Ordner src und nenne mir die Summe.",
    "Compte les lignes de tous les fichiers Python du dossier src et donne le total.",
    "Cuenta las líneas de todos los archivos Python en la carpeta src y dime el total.",
    "Посчитай строки во всех файлах Python в папке src и скажи итог.",
]
OUTPUT = "4127"
EMPTY_NOTE = "Your reply was empty. Use the output above to answer my request, or go on with a tool call if it is not done."
PROTOCOLS = st.sampled_from(["tools", "auto", "text"])
WORD = st.text(alphabet="bcdfghjklmnpqrstvwxz", min_size=3, max_size=8)


def _decide(mode: str, earlier: list[ModelMessage], turn: list[ModelMessage], text: str) -> Any:
    return reply_policy(mode).decide(reply(text), [*earlier, *turn], turn, TOOLS)  # type: ignore[arg-type]


@st.composite
def paraphrase(draw: st.DrawFn, text: str) -> str:
    """``text``'s words shuffled, up to a fifth of them dropped or replaced, in another case."""
    words = re.findall(r"\w+", text)
    changed = draw(st.integers(0, len(words) // 5))
    words = draw(st.permutations(words))
    for _ in range(changed):
        at = draw(st.integers(0, len(words) - 1))
        if draw(st.booleans()):
            del words[at]
        else:
            words[at] = draw(WORD)
    case = draw(st.sampled_from([str.lower, str.upper, str.title, str.capitalize]))
    result = case(" ".join(words)) + draw(st.sampled_from([".", "!", "", " ?"]))
    assume(not part_of(result, text))  # a run of its words in order is a part of it quoted (an answer)
    return result


def _after_action(request: str) -> list[ModelMessage]:
    return [prompt(request), *tool_step("print(sum(len(open(f).readlines()) for f in files))", OUTPUT)]


@settings(max_examples=80, deadline=None)
@given(data=st.data(), request=st.sampled_from(REQUESTS), mode=PROTOCOLS)
def test_a_restated_request_is_asked_once(data: st.DataObject, request: str, mode: str) -> None:
    text = data.draw(paraphrase(request))
    decision = _decide(mode, [], _after_action(request), text)
    assert isinstance(decision, NudgeModel) and decision.reason == OWN_WORDS, (text, decision)


@settings(max_examples=80, deadline=None)
@given(data=st.data(), request=st.sampled_from(REQUESTS), mode=PROTOCOLS, note=st.sampled_from(["empty", "cancel"]))
def test_a_paraphrased_app_note_is_asked_once_even_after_an_action(
    data: st.DataObject, request: str, mode: str, note: str
) -> None:
    """A note earlier in the turn (an empty-reply nudge) or before it (the cancel note), an action since."""
    if note == "empty":
        earlier: list[ModelMessage] = []
        turn = [prompt(request), reply(""), nudge(EMPTY_NOTE, "the reply was empty"), *_after_action(request)[1:]]
        told = EMPTY_NOTE
    else:
        earlier, turn, told = CANCELLED, _after_action(request), CANCELLED_NOTE
    text = data.draw(paraphrase(told))
    decision = _decide(mode, earlier, turn, text)
    assert isinstance(decision, NudgeModel) and decision.reason == OWN_WORDS, (text, decision)


@settings(max_examples=80, deadline=None)
@given(
    request=st.sampled_from(REQUESTS),
    mode=PROTOCOLS,
    quoted=st.integers(1, 3),
    own=st.lists(WORD, min_size=3, max_size=8),
    data=st.data(),
)
def test_an_answer_that_quotes_a_few_request_words_is_the_answer(
    request: str, mode: str, quoted: int, own: list[str], data: st.DataObject
) -> None:
    words = re.findall(r"\w+", request)
    start = data.draw(st.integers(0, len(words) - quoted))
    text = " ".join([*words[start : start + quoted], *own, "4,127"]) + "."
    assert isinstance(_decide(mode, [], _after_action(request), text), FinalAnswer), text


def test_restates_reads_word_multisets() -> None:
    assert restates("the total tell me lines of every Python file", "Tell me the total lines of every Python file")
    assert not restates("The total is 4127 lines in 12 Python files", "Tell me the total lines of every Python file")
    assert not restates("Ja.", "Ja.")  # too short to say
