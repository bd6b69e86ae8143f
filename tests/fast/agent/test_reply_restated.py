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
from freeact_tui.agent.policy.overlap import RESTATE_MIN_WORDS, adds_nothing, part_of, restates
from freeact_tui.agent.policy.overlap import words as overlap_words
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
def paraphrase(draw: st.DrawFn, text: str, replace: bool = True) -> str:
    """``text``'s words shuffled, up to a fifth of them dropped or (``replace``) replaced, in another case."""
    words = re.findall(r"\w+", text)
    changed = draw(st.integers(0, len(words) // 5))
    words = draw(st.permutations(words))
    for _ in range(changed):
        at = draw(st.integers(0, len(words) - 1))
        if not replace or draw(st.booleans()):
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
    text = data.draw(paraphrase(request, replace=False))  # a word added or changed may be the answer (F3)
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


# -- F3 (model10): an answer that affirms or states the question is no echo of it --------------------

POLAR = [
    # (question, an affirmative answer, a negative one): each reuses the question's words and adds some.
    ("Is 17 a prime number?", "Yes, 17 is a prime number.", "No, 17 is not a prime number."),
    (
        "Does the file data.csv have a header row?",
        "Yes, the file data.csv has a header row.",
        "No, the file data.csv does not have a header row.",
    ),
    (
        "Is the service running on port 8080?",
        "Yes, the service is running on port 8080.",
        "No, the service is not running on port 8080.",
    ),
    ("Ist 17 eine Primzahl?", "Ja, 17 ist eine Primzahl.", "Nein, 17 ist keine Primzahl."),
    ("Est-ce que 17 est un nombre premier ?", "Oui, 17 est un nombre premier.", "Non, 17 n'est pas un nombre premier."),
    ("¿Es 17 un número primo?", "Sí, 17 es un número primo.", "No, 17 no es un número primo."),
    ("Является ли 17 простым числом?", "Да, 17 является простым числом.", "Нет, 17 не является простым числом."),
    ("17是质数吗？", "是的，17是质数。", "不，17不是质数。"),
    ("17は素数ですか？", "はい、17は素数です。", "いいえ、17は素数ではありません。"),
]
SUBJECTS = st.text(alphabet="bcdfghjklmnpqrstvwxz", min_size=4, max_size=9)


@st.composite
def polar_question(draw: st.DrawFn) -> tuple[str, str]:
    """A generated yes/no question and an answer that reuses its words (some reordered or dropped) and
    adds one word of its own (an affirmation, a negation, a value) — in several languages and scripts."""
    subject, other = draw(SUBJECTS), draw(SUBJECTS)
    ask, verb, extra, new = draw(
        st.sampled_from(
            [
                ("Is the", "running on", "today", "yes"),
                ("Does the", "contain", "now", "not"),
                ("Ist die", "aktiv auf", "heute", "ja"),
                ("Est-ce que le", "tourne sur", "encore", "oui"),
                ("Является ли", "запущен на", "сейчас", "да"),
            ]
        )
    )
    question = f"{ask} {subject} {verb} {other} {extra}?"
    kept = [w for w in re.findall(r"\w+", question) if draw(st.booleans()) or w in (subject, other)]
    assume(len(kept) >= 3)
    kept = draw(st.permutations(kept))
    at = draw(st.integers(0, len(kept)))
    answer = " ".join([*kept[:at], draw(st.sampled_from([new, new.upper(), "42", "True"])), *kept[at:]]) + "."
    return question, answer


@settings(max_examples=120, deadline=None)
@given(case=polar_question(), mode=PROTOCOLS)
def test_an_answer_that_repeats_the_question_and_adds_a_word_is_the_answer(case: tuple[str, str], mode: str) -> None:
    question, answer = case
    turn = [prompt(question), *tool_step("print(count(), check())", "42 True")]
    assert isinstance(_decide(mode, [], turn, answer), FinalAnswer), (question, answer)


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(POLAR), negative=st.booleans(), mode=PROTOCOLS)
def test_the_reported_yes_no_answers_are_the_answer(case: tuple[str, str, str], negative: bool, mode: str) -> None:
    question, yes, no = case
    turn = [prompt(question), *tool_step("print(check())", "False" if negative else "True")]
    answer = no if negative else yes
    assert isinstance(_decide(mode, [], turn, answer), FinalAnswer), (question, answer)


@settings(max_examples=80, deadline=None)
@given(data=st.data(), case=st.sampled_from(POLAR), mode=PROTOCOLS)
def test_a_question_reordered_or_cut_is_still_asked(data: st.DataObject, case: tuple[str, str, str], mode: str) -> None:
    """Pure reorders and drops of the question add nothing: asked once, in every script."""
    question = case[0]
    text = data.draw(paraphrase(question, replace=False))
    assume(len(overlap_words(text)) >= RESTATE_MIN_WORDS)
    decision = _decide(mode, [], [prompt(question), *tool_step("print(check())", "True")], text)
    assert isinstance(decision, NudgeModel) and decision.reason == OWN_WORDS, (text, decision)


def test_adds_nothing_reads_added_words() -> None:
    assert adds_nothing("17 a prime number is", "Is 17 a prime number?")
    assert not adds_nothing("Yes, 17 is a prime number.", "Is 17 a prime number?")
    assert not adds_nothing("是的，17是质数。", "17是质数吗？")
    assert not adds_nothing("is is 17 a prime", "Is 17 a prime number?")  # a word twice is a word added
