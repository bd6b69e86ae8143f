"""#45 leftover (model9): a correct explanation of a printed result is the answer; a made-up factor is asked.

"366 days × 24 hours × 3,600 seconds = 31,622,400" where only ``31622400`` was printed was asked once
more: the factors are in the CODE that printed it. Class: numbers of an answer that explain a printed
result by how the code computed it. Mechanism (``grounding.unchecked_numbers``): a number of the answer
is grounded when an output holds it, the request does, or it is a literal operand (``operands.py``) of
the code whose run printed another number of the same answer. A code literal alone still grounds
nothing: an answer whose only number is a literal of the code (``print(10982432 * 1.09)`` → "10,982,432")
is asked, as before.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage

from freeact_tui.agent.policy.grounding import unchecked_numbers
from freeact_tui.agent.policy.nudge import CHECK
from freeact_tui.agent.policy.operands import code_operands
from freeact_tui.agent.policy.reply import FinalAnswer, NudgeModel, reply_policy
from tests.fast.agent.test_reply_policy import TOOLS, block_step, prompt, reply, tool_step

FACTOR = st.integers(10, 999)
TIMES = st.sampled_from([" × ", " * ", " x ", "·"])
GROUPED = st.sampled_from(["{:,}", "{}", "{:_}"])


def _turn(code: str, output: str, mode: str = "auto") -> list[ModelMessage]:
    step = block_step(code, output) if mode == "text" else tool_step(code, output)
    return [prompt("Wie viele Sekunden hat ein Schaltjahr?"), *step]


def _decide(mode: str, turn: list[ModelMessage], text: str) -> object:
    return reply_policy(mode).decide(reply(text), turn, turn, TOOLS)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["auto", "text"])
def test_the_reported_explanation_is_the_answer(mode: str) -> None:
    turn = _turn("print(366 * 24 * 3600)", "31622400", mode)
    assert isinstance(_decide(mode, turn, "366 days × 24 hours × 3,600 seconds = 31,622,400 seconds."), FinalAnswer)


@pytest.mark.parametrize("mode", ["auto", "text"])
def test_a_code_literal_alone_is_still_asked(mode: str) -> None:
    """The wrong answer of #45: its only number is a literal of the code, no output shows it."""
    turn = _turn("print(10982432 * 1.09)", "11971850.88", mode)
    decision = _decide(mode, turn, "Ein Tag hat 10,982,432 Sekunden.")
    assert isinstance(decision, NudgeModel) and decision.reason == CHECK, decision


@settings(max_examples=150, deadline=None)
@given(factors=st.lists(FACTOR, min_size=2, max_size=4), times=TIMES, form=GROUPED)
def test_the_factors_of_a_printed_product_ground_its_explanation(factors: list[int], times: str, form: str) -> None:
    product = 1
    for f in factors:
        product *= f
    code = f"print({' * '.join(map(str, factors))})"
    text = f"{times.join(map(str, factors))} = {form.format(product)}"
    assert unchecked_numbers(text, _turn(code, str(product))) == []


@settings(max_examples=150, deadline=None)
@given(factors=st.lists(FACTOR, min_size=2, max_size=4), made_up=FACTOR, at=st.integers(0, 3), times=TIMES)
def test_an_invented_factor_is_asked(factors: list[int], made_up: int, at: int, times: str) -> None:
    product = 1
    for f in factors:
        product *= f
    pairs = {a * b for i, a in enumerate(factors) for b in factors[i + 1 :]}
    derived = {product // f for f in factors} | {product + f for f in factors} | {product - f for f in factors}
    scaled = {round(product / f) for f in (24, 60, 3600)}
    assume(all(abs(made_up - v) > 10 for v in {*factors, *pairs, *derived, *scaled, product}))  # a derivation holds
    stated = list(factors)
    stated[at % len(stated)] = made_up
    code = f"print({' * '.join(map(str, factors))})"
    text = f"{times.join(map(str, stated))} = {product:,}"
    assert str(made_up) in unchecked_numbers(text, _turn(code, str(product)))


@settings(max_examples=100, deadline=None)
@given(factors=st.lists(st.integers(100, 999), min_size=2, max_size=3, unique=True), scale=st.integers(2, 9))
def test_literals_of_code_that_printed_nothing_of_the_answer_ground_nothing(factors: list[int], scale: int) -> None:
    """The answer states literals of the code and nothing the code printed: asked."""
    printed = scale
    for f in factors:
        printed *= f
    scaled = [printed / f for f in (24, 60, 3600)]
    assume(all(abs(f - v) > 10 for f in factors for v in scaled))  # a unit conversion of the output holds
    code = f"print({' * '.join(map(str, factors))} * {scale})"
    text = f"The result is {factors[0]:,} and {factors[-1]:,}."
    assert unchecked_numbers(text, _turn(code, str(printed))) == [f"{factors[0]:,}", f"{factors[-1]:,}"]


def test_operands_are_what_an_operator_applies_to() -> None:
    assert sorted(code_operands("x = 10982432\nprint(x * 1.09 - -2)\nn += 3600\nrange(1000)")) == [-2.0, 1.09, 3600.0]
    assert code_operands("!ls -la") == []
