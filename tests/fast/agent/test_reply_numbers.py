"""The number check of the reply policy by values (#45 attack 7): one reader, a tolerance, bounded derivations.

A reply that would end a turn in which code worked is asked once to check its numbers when no output,
request of the turn holds or derives them (the code's literals are the model's own writing: no ground) (``grounding.unchecked_numbers``). The cases
of the attack (``/tmp/attack-model/t_g6.py``) are rows; the class ("numbers compared as strings") is a
property: a grounded value written in every supported way passes, a value no output holds is nudged.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart

from freeact_tui.agent.policy.grounding import unchecked_numbers, without_comments
from freeact_tui.agent.policy.nudge import CHECK, NUMBER
from freeact_tui.agent.policy.numbers import read_numbers
from freeact_tui.agent.policy.outcomes import RESULTS_KEY
from freeact_tui.agent.policy.reply import FinalAnswer, NudgeModel
from freeact_tui.store.meta_keys import NUDGE_KEY, SWITCH_KEY
from tests.fast.agent.test_reply_policy import Row, block_step, decide, prompt, reply, tool_step

DAY = [prompt("How many seconds are in a day?"), *tool_step("print(24*60*60)", "86400")]


def _decide(turn: list[ModelMessage], text: str, mode: str = "auto") -> FinalAnswer | NudgeModel:
    decision = decide(Row("", mode, turn, reply(text), FinalAnswer))
    assert isinstance(decision, FinalAnswer | NudgeModel), decision
    return decision


def _checked(turn: list[ModelMessage], text: str) -> bool:
    """Whether the reply is asked to check its numbers (the ``CHECK`` row)."""
    decision = _decide(turn, text)
    return isinstance(decision, NudgeModel) and decision.reason == CHECK


NNBSP, THIN, NBSP = "\u202f", "\u2009", "\u00a0"
GROUNDED = [
    ("plain", DAY, "There are 86400 seconds in a day."),
    ("commas", DAY, "There are 86,400 seconds in a day."),
    ("a space", DAY, "There are 86 400 seconds in a day."),
    ("a narrow no-break space", DAY, f"Il y a 86{NNBSP}400 secondes dans une journée."),
    ("a thin space", DAY, f"There are 86{THIN}400 seconds in a day."),
    ("a no-break space", DAY, f"Hay 86{NBSP}400 segundos."),
    ("German grouping", DAY, "Ein Tag hat 86.400 Sekunden."),
    ("Swiss grouping", DAY, "Ein Tag hat 86'400 Sekunden."),
    ("scientific notation", DAY, "There are 8.64e4 seconds in a day."),
    ("times ten to the", DAY, "There are 8.64×10^4 seconds in a day."),
    ("a k suffix", DAY, "There are 86.4k seconds in a day."),
    ("Chinese, digits glued to the text", DAY, "一天有86400秒。"),
    ("Arabic-Indic digits", DAY, "في اليوم ٨٦٤٠٠ ثانية"),
    ("a unit conversion", DAY, "86400 seconds, which is 1440 minutes or 24 hours."),
    (
        "a sum of two outputs",
        [
            prompt("Add the two numbers."),
            *tool_step("print(123)", "123", call_id="a"),
            *tool_step("print(456)", "456", call_id="b"),
        ],
        "Together they make 579.",
    ),
    (
        "a percentage of a printed share",
        [prompt("Share?"), *tool_step("print(0.4567)", "0.4567")],
        "The share is 45.67%.",
    ),
    (
        "a rounded mean, decimal comma",
        [prompt("Mittelwert?"), *block_step("print(sum(xs) / len(xs))", "5.928571428571429")],
        "Der Mittelwert ist 5,93.",
    ),
    (
        "a ratio",
        [prompt("Per item?"), *tool_step("print(1234, 5678)", "1234 5678")],
        "That is 4.601 per item.",
    ),
]
MADE_UP = [
    # a scale word is language: read as its digits, 86.4 (which no output shows), whatever the word says
    ("a scale word (any language)", DAY, "A day has 86.4 thousand seconds; ein Tag hat 86,4 Tausend."),
    ("#45 a wrong scale word", DAY, "A day has 86.4 million seconds."),
    (
        "a number only the code wrote",
        [prompt("Seconds in a day?"), *tool_step("x = 10982432\nprint(24 * 60 * 60)", "86400")],
        "A day has 10,982,432 seconds.",
    ),
    ("scientific notation", DAY, "There are 9.13e7 seconds in a day."),
    ("plain", DAY, "There are 91234 seconds in a day."),
    ("fullwidth digits", DAY, "There are ９１２３４ seconds in a day."),
    ("Arabic-Indic digits", DAY, "There are ٩١٢٣٤ seconds in a day."),
    ("German grouping", DAY, "Ein Tag hat 91.234 Sekunden."),
    ("Chinese", DAY, "一天有91234秒。"),
    (
        "a number only in a code comment",
        [prompt("Seconds?"), *tool_step("print(24*60*60)  # 91234", "86400")],
        "91234.",
    ),
    (
        "#45 the German trace",
        [
            prompt("Wie viele Sekunden hat ein Tag?"),
            *block_step("print(24 * 60 * 60 * 138.57)", "11972808.0"),
        ],
        "Ein Tag hat 10,982,432 Sekunden.",
    ),
    (
        "a product of the request's numbers, not of an output",
        [prompt("What is 1234 * 5678?"), *tool_step("print(1234 + 5678)", "6912")],
        "It is 7006652.",
    ),
]


@pytest.mark.parametrize(("case", "turn", "text"), GROUNDED, ids=[c for c, _, _ in GROUNDED])
def test_a_grounded_number_in_any_form_is_the_answer(case: str, turn: list[ModelMessage], text: str) -> None:
    assert isinstance(_decide(turn, text), FinalAnswer), (case, unchecked_numbers(text, turn))


@pytest.mark.parametrize(("case", "turn", "text"), MADE_UP, ids=[c for c, _, _ in MADE_UP])
def test_a_made_up_number_in_any_form_is_asked_once(case: str, turn: list[ModelMessage], text: str) -> None:
    decision = _decide(turn, text)
    assert isinstance(decision, NudgeModel) and decision.reason == CHECK, (case, decision)
    again = [*turn, reply(text), decision.request, *tool_step("print(24*60*60)", "86400", call_id="z")]
    # asked once: the second such reply is the answer
    assert isinstance(_decide(again, f"Checked: {text}"), FinalAnswer)


def test_number_words_are_no_values() -> None:
    """Reading number words means reading one language: a reply whose only numbers are words makes
    no claim the check reads (neither grounded nor faulted); its other rules still apply."""
    assert read_numbers("ninety-one thousand, einundneunzigtausend, quatre-vingt-onze mille") == []
    assert isinstance(_decide(DAY, "There are ninety-one thousand seconds in a day."), FinalAnswer)


def test_without_nothing_run_the_numbers_are_not_derived() -> None:
    """A turn in which nothing worked: ``1234 * 5678 = 7006652`` worked out in the head is no result,
    even if it is the product of the request's numbers; the request's own numbers, in any form, are."""
    turn = [prompt("What is 1234 * 5678?")]
    decision = _decide(turn, "1234 * 5678 = 7006652.", mode="text")
    assert isinstance(decision, NudgeModel) and decision.reason == NUMBER
    assert not (
        isinstance(d := _decide(turn, "You asked about 1.234 and 5,678.", mode="text"), NudgeModel)
        and d.reason == NUMBER
    )


def test_comments_are_not_read_as_code() -> None:
    assert without_comments("print(24*60*60)  # 91234\nx = '# 5'") == "print(24*60*60)  \nx = '# 5'"
    assert "91234" not in without_comments("%%bash\necho 1 # 91234")


# -- the class: generated values, formatted in every supported way --------------------------------


def _grouped(value: float, places: int, group: str, point: str) -> str:
    text = f"{abs(value):,.{places}f}".replace(",", "\0").replace(".", point).replace("\0", group)
    return f"-{text}" if value < 0 else text


def _digits(text: str, zero: str) -> str:
    return "".join(chr(ord(zero) + int(c)) if c.isdigit() else c for c in text)


FORMATS: dict[str, Callable[[float, int], str]] = {
    "plain": lambda v, p: f"{v:.{p}f}",
    "commas": lambda v, p: _grouped(v, p, ",", "."),
    "German": lambda v, p: _grouped(v, p, ".", ","),
    "French (narrow no-break space)": lambda v, p: _grouped(v, p, NNBSP, ","),
    "thin space": lambda v, p: _grouped(v, p, THIN, "."),
    "a space": lambda v, p: _grouped(v, p, " ", ","),
    "Swiss": lambda v, p: _grouped(v, p, "'", "."),
    "exponent": lambda v, p: f"{v:.6e}",
    # "#" keeps trailing zeros (1.00e+04, not 1e+04): the written precision stays three digits
    "three significant digits": lambda v, p: f"{v:#.3g}".rstrip("."),
    "k": lambda v, p: f"{v / 1000:.3f}k",
    "percent": lambda v, p: f"{v * 100:.{p}f}%",
    "Arabic-Indic digits": lambda v, p: _digits(f"{v:.{p}f}", "\u0660"),
    "fullwidth digits": lambda v, p: _digits(f"{v:.{p}f}", "\uff10"),
}
VALUES = st.one_of(
    st.integers(min_value=100, max_value=10**9).map(float).map(lambda v: (v, 0)),
    st.tuples(st.integers(min_value=10_000, max_value=10**8), st.integers(min_value=1, max_value=3)).map(
        lambda t: (t[0] / 10 ** t[1], t[1])
    ),
)


def _turn(value: float, places: int) -> list[ModelMessage]:
    printed = f"{value:.{places}f}" if places else str(int(value))
    return [prompt("What does the computation give?"), *tool_step("print(compute())", printed)]


@settings(max_examples=200, deadline=None)
@given(VALUES, st.sampled_from(sorted(FORMATS)))
def test_a_grounded_value_in_any_format_passes(value: tuple[float, int], form: str) -> None:
    v, places = value
    text = f"The result is {FORMATS[form](v, places)}."
    assert unchecked_numbers(text, _turn(v, places)) == [], text


@settings(max_examples=200, deadline=None)
@given(VALUES, st.sampled_from(sorted(FORMATS)), st.floats(min_value=1.03, max_value=1.9))
def test_a_value_no_output_holds_is_asked_once(value: tuple[float, int], form: str, off: float) -> None:
    """Off by 3 % to 90 %: outside the rounding tolerance and none of the derivations (one value is known:
    no pair; a conversion by a factor is off by more than 3 %)."""
    v, places = value
    turn = _turn(v, places)
    text = f"The result is {FORMATS[form](v * off, places)}."
    assert _checked(turn, text), text


def test_a_second_check_is_never_asked() -> None:
    turn: list[ModelMessage] = [*DAY]
    decision = _decide(turn, "91234")
    assert isinstance(decision, NudgeModel)
    turn += [reply("91234"), decision.request, *tool_step("print(1)", "1", call_id="q")]
    assert isinstance(_decide(turn, "It is 91234."), FinalAnswer)


def test_outputs_reported_with_the_switch_to_text_are_outputs() -> None:
    """``auto`` switching to text sends the switch note and the block's output in one message."""
    results = [{"id": "text_1", "code": "print(6 * 7)", "outcome": "ok", "output": "42"}]
    message = ModelRequest(
        parts=[UserPromptPart("(Tool calls are off from now on: …)\n\nOutput of your code block:\n42")],
        metadata={SWITCH_KEY: "the model wrote its code in a code block", RESULTS_KEY: results},
    )
    turn = [prompt("compute"), reply("```python\nprint(6 * 7)\n```"), message]
    assert unchecked_numbers("It is 42.", turn) == []
    assert unchecked_numbers("It is 43.", turn) == ["43"]


def test_app_notes_are_no_outputs() -> None:
    """A number only in a nudge the app sent (it quotes the reply) grounds nothing."""
    note = ModelRequest(
        parts=[UserPromptPart("These numbers appear in no output: 91234.")], metadata={NUDGE_KEY: CHECK.log}
    )
    turn = [*DAY, ModelResponse(parts=[TextPart("91234")]), note]
    assert unchecked_numbers("91234", turn) == ["91234"]


# -- numbers beyond a float's range (a git hash such as 4e60978, 1e999, a 400-digit number) -----------

NUMBER_LIKE = st.one_of(
    st.text(alphabet="0123456789eE+-−.,' x×·^%kM", min_size=1, max_size=40),
    st.builds(lambda m, e: f"{m}e{e}", st.integers(0, 10**6), st.integers(-(10**6), 10**6)),
    st.builds(lambda n: "9" * n, st.integers(300, 5000)),
    st.builds(lambda h: f"commit {h:07x}", st.integers(0, 16**7 - 1)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(NUMBER_LIKE, st.text(max_size=20)), min_size=1, max_size=6))
def test_reading_numbers_never_fails_and_gives_finite_values(pieces: list[str]) -> None:
    """Whatever a reply or an output writes, its numbers are read without an error and every value read
    is finite; the check of a reply against such outputs decides (never raises)."""
    import math

    from freeact_tui.agent.policy.numbers import Grounds, written_values

    text = " ".join(pieces)
    stated = read_numbers(text)
    assert all(math.isfinite(v.value) for s in stated for r in s.readings for v in r)
    grounds = Grounds(list(written_values(text)), [1.0, 0.0])
    for s in stated:
        grounds.holds(s)
    unchecked_numbers(text, [prompt(text), *tool_step("print(x)", text)])


@pytest.mark.parametrize("text", ["The value is 1e999.", "commit 4e60978 fixed it", "1" * 500, "2e-999", "3e99999999"])
def test_a_number_out_of_range_is_not_read_and_the_reply_is_decided(text: str) -> None:
    assert all(s.text not in ("1e999", "4e60978", "3e99999999") for s in read_numbers(text))
    turn = [prompt("what is it?"), *tool_step("print(1)", "commit 4e60978\n1e999\n")]
    for mode in ("tools", "auto", "text"):
        assert decide(Row("F6 of the trust attack", mode, turn, reply(text), FinalAnswer)) is not None
