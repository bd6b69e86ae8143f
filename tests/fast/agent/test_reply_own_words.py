"""A reply that answers nothing is judged by structure, not by its words (#45 attack 6).

The app's notes (the cancel note, the broken-call notice, an approval) translated or paraphrased got
past the word-trigram check. ``grounding.answers_nothing``: right after a note of the app with no
action since (a broken or refused call's return, a nudge, the cancelled request before the turn) a
reply that names nothing of the user's messages, an output or an earlier answer is asked for once more. Generated here: paraphrases and
translations of the notes in many languages (a hand-made corpus, combined by Hypothesis) are never the
answer in such a turn, and real answers in the same languages are.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart

from freeact_tui.agent.policy.nudge import OWN_WORDS, UNRELATED
from freeact_tui.agent.policy.reply import FinalAnswer, NudgeModel
from freeact_tui.store.prompt_record import CANCELLED_NOTE, CUT_KEY
from tests.fast.agent.test_reply_policy import (
    Row,
    broken,
    decide,
    guarded_step,
    prompt,
    reply,
    tool_step,
)

NOTES = [
    # the cancel note
    CANCELLED_NOTE,
    "The user canceled the request before an answer came. I will answer the next request instead of this one.",
    "Der Benutzer hat diese Anfrage abgebrochen, bevor sie beantwortet wurde. Beantworte die nächste Anfrage, nicht diese.",
    "L'utilisateur a annulé cette demande avant la réponse. Réponds à la prochaine demande, pas à celle-ci.",
    "El usuario canceló esta solicitud antes de que fuera respondida. Responde la siguiente solicitud.",
    "L'utente ha annullato questa richiesta prima della risposta. Rispondi alla prossima richiesta.",
    "De gebruiker heeft dit verzoek geannuleerd voordat het werd beantwoord.",
    "Użytkownik anulował to żądanie, zanim otrzymał odpowiedź.",
    "Пользователь отменил этот запрос до того, как на него ответили.",
    "用户在回答之前取消了这个请求。请回答下一个请求。",
    "ユーザーは回答される前にこのリクエストをキャンセルしました。",
    # the broken-call notice
    "Die Argumente deines Aufrufs sind kein gültiges JSON. Schreibe den Aufruf erneut mit gültigen JSON-Argumenten.",
    "Les arguments de ton appel ne sont pas du JSON valide. Refais l'appel avec des arguments valides.",
    "Los argumentos de la llamada no son JSON válido. Vuelve a llamar con argumentos válidos.",
    "The arguments of your call were broken; please call the tool again with proper arguments.",
    # an approval, as #45's first trace ended on
    "The user approved this request.",
    "Der Benutzer hat diese Aktion genehmigt.",
    "L'utilisateur a approuvé cette action.",
]
QUESTIONS = {
    "en": ("What is the capital of France?", "The capital of France is Paris, on the Seine."),
    "de": ("Was ist die Hauptstadt von Frankreich?", "Die Hauptstadt von Frankreich ist Paris."),
    "fr": ("Quelle est la capitale de la France ?", "La capitale de la France est Paris."),
    "es": ("¿Cuál es la capital de Francia?", "La capital de Francia es París, junto al Sena."),
    "it": ("Qual è la capitale della Francia?", "La capitale della Francia è Parigi."),
    "ru": ("Какая столица у Франции?", "Столица Франции — Париж, город на Сене."),
    "zh": ("法国的首都是哪里？", "法国的首都是巴黎。"),
    "ja": ("フランスの首都はどこですか？", "フランスの首都はパリです。"),
}
DAY = {
    "en": ("How many seconds are in a day?", "A day has 86,400 seconds."),
    "de": ("Wie viele Sekunden hat ein Tag?", "Ein Tag hat 86.400 Sekunden."),
    "fr": ("Combien de secondes dans une journée ?", "Une journée compte 86 400 secondes."),
    "zh": ("一天有多少秒？", "一天有86400秒。"),
}
CANCELLED = [
    prompt("Summarise the README"),
    ModelResponse(parts=[TextPart(CANCELLED_NOTE)], metadata={CUT_KEY: "cancelled"}),
]


def _after_cancel(question: str) -> tuple[list[ModelMessage], list[ModelMessage]]:
    return CANCELLED, [prompt(question)]


def _after_broken_call(question: str) -> tuple[list[ModelMessage], list[ModelMessage]]:
    return [], [prompt(question), *broken()]


def _after_action(question: str) -> tuple[list[ModelMessage], list[ModelMessage]]:
    return [], [prompt(question), *tool_step("print(24*60*60)", "86400")]


def _after_refused_call(question: str) -> tuple[list[ModelMessage], list[ModelMessage]]:
    error = "NameError: name 'x' is not defined"
    return [], [
        prompt(question),
        *tool_step("print(x)", error, "error", "c0"),
        *guarded_step("print(x)", error, "c1"),
    ]


# After a nudge with no action since, ``nudge.may_nudge`` gives no second one: that bound decides there.
SCENES = {
    "after a cancel": _after_cancel,
    "after a broken call": _after_broken_call,
    "after a refused call": _after_refused_call,
}


def _decide(earlier: list[ModelMessage], turn: list[ModelMessage], text: str) -> FinalAnswer | NudgeModel:
    decision = decide(Row("", "auto", turn, reply(text), FinalAnswer, earlier=earlier))
    assert isinstance(decision, FinalAnswer | NudgeModel), decision
    return decision


def _asked_again(decision: FinalAnswer | NudgeModel) -> bool:
    return isinstance(decision, NudgeModel) and decision.reason in (UNRELATED, OWN_WORDS)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(sorted(SCENES)),
    st.sampled_from(sorted(QUESTIONS)),
    st.lists(st.sampled_from(NOTES), min_size=1, max_size=3),
)
def test_a_note_translated_or_paraphrased_is_never_the_answer(
    scene: str, lang: str, notes: list[str]
) -> None:
    earlier, turn = SCENES[scene](QUESTIONS[lang][0])
    text = " ".join(notes)
    assert _asked_again(_decide(earlier, turn, text)), (scene, lang, text)


@pytest.mark.parametrize("lang", sorted(QUESTIONS))
@pytest.mark.parametrize("scene", sorted(SCENES))
def test_a_real_answer_in_any_language_is_the_answer(scene: str, lang: str) -> None:
    question, answer = QUESTIONS[lang]
    earlier, turn = SCENES[scene](question)
    assert isinstance(_decide(earlier, turn, answer), FinalAnswer)


@pytest.mark.parametrize("lang", sorted(DAY))
def test_a_real_answer_from_the_output_is_the_answer(lang: str) -> None:
    question, answer = DAY[lang]
    earlier, turn = _after_action(question)
    assert isinstance(_decide(earlier, turn, answer), FinalAnswer)


def test_a_confirmation_after_an_action_is_the_answer() -> None:
    """After an action a reply is judged by its numbers, not by what it names: a confirmation names
    nothing either ("Done, I wrote the greeting into the file.")."""
    turn = [prompt("Write hello to a.txt"), *tool_step("open('a.txt', 'w').write('hello')", "")]
    assert isinstance(_decide([], turn, "Done, I wrote the greeting into the file."), FinalAnswer)


def test_a_plain_chat_turn_is_never_judged() -> None:
    """No action, no note, no cancel before: small talk in any language is the answer."""
    for question, answer in [
        ("Hi!", "Hello! How can I help you today?"),
        ("Danke!", "Gern geschehen, bis bald!"),
    ]:
        assert isinstance(_decide([], [prompt(question)], answer), FinalAnswer)


def test_asked_once_then_the_reply_is_the_answer() -> None:
    earlier, turn = _after_cancel("What is the capital of France?")
    first = _decide(earlier, turn, NOTES[2])
    assert isinstance(first, NudgeModel)
    turn = [*turn, reply(NOTES[2]), first.request]
    assert isinstance(_decide(earlier, turn, NOTES[3]), FinalAnswer)
