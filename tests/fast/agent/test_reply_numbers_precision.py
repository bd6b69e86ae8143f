"""#45 (model-fault attacker, round 6): one notion of agreement — a stated number agrees with a value
when the value rounded at the stated number's last significant digit is the stated number; derivations
only while the outputs are few; aggregates of one output and of all outputs ground; superscript
exponents are digits; a stated magnitude grounds a negative output (kernel-free)."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage

from freeact_tui.agent.policy.grounding import unchecked_numbers
from freeact_tui.agent.policy.numbers import MAX_DERIVED_FROM, MIN_SIGNIFICANT
from tests.fast.agent.test_reply_policy import prompt, tool_step


def _turn(*outputs: str) -> list[ModelMessage]:
    turn: list[ModelMessage] = [prompt("What does it give?")]
    for i, output in enumerate(outputs):
        turn += tool_step(f"print(step_{i}())", output, call_id=f"c{i}")
    return turn


def _grounded(outputs: tuple[str, ...], reply: str) -> bool:
    return unchecked_numbers(reply, _turn(*outputs)) == []


WRONG = [
    (("86400",), "86,800 seconds"),
    (("100",), "The answer is 100.4"),
    (("1000",), "1,004 items"),
    (("12345",), "12,345,678"),
    ((str(list(range(1000))),), "The answer to your question is 1,776 exactly."),
]
RIGHT = [
    (("86400",), "86,400 seconds, about 86,000."),
    (("120\n340\n560",), "They add up to 1,020."),
    (("120", "340", "560"), "They add up to 1,020."),
    (("13\n27\n41\n58",), "The mean is 34.75."),
    (("1200\n1350\n990",), "The quarter total is 3,540, the monthly average 1,180."),
    (("1200", "1350", "990"), "The quarter total is 3,540, the monthly average 1,180."),
    (("86400",), "That is 8.64 × 10⁴ seconds."),
    (("-5.5",), "minus 5.5 degrees"),
    (("-5.5",), "moins 5,5 degrés"),
    (("7\n11\n13",), "There are 3 values, the largest 13."),
]


@pytest.mark.parametrize(("outputs", "reply"), WRONG)
def test_the_testers_wrong_numbers_are_asked_to_be_checked(outputs: tuple[str, ...], reply: str) -> None:
    assert not _grounded(outputs, reply)


@pytest.mark.parametrize(("outputs", "reply"), RIGHT)
def test_the_testers_right_numbers_are_answers(outputs: tuple[str, ...], reply: str) -> None:
    assert _grounded(outputs, reply)


def _at(value: Decimal, unit: Decimal) -> Decimal:
    return (value / unit).quantize(Decimal(1), rounding=ROUND_HALF_EVEN) * unit


VALUE = st.one_of(
    st.integers(10**2, 10**9).map(Decimal),
    st.tuples(st.integers(10**3, 10**9), st.integers(1, 4)).map(lambda t: Decimal(t[0]).scaleb(-t[1])),
)


@settings(max_examples=300, deadline=None)
@given(value=VALUE, digits=st.integers(MIN_SIGNIFICANT, 9))
def test_a_value_rounded_at_any_written_precision_agrees(value: Decimal, digits: int) -> None:
    """The printed value, rounded to ``digits`` significant digits and written so: grounded."""
    unit = Decimal(1).scaleb(value.adjusted() - digits + 1)
    stated = _at(value, unit)
    text = f"{stated:f}" if unit < 1 else f"{int(stated):,}"
    assert _grounded((f"{value:f}",), f"It is {text}."), text


@settings(max_examples=300, deadline=None)
@given(value=VALUE, digits=st.integers(MIN_SIGNIFICANT + 1, 9), off=st.integers(-9, 9).filter(bool))
def test_a_value_off_by_units_of_its_last_written_digit_is_checked(
    value: Decimal, digits: int, off: int
) -> None:
    """The rounded value moved by ``off`` units of its last written digit (that digit not zero, so the
    precision it is read at is the one written): not the printed value, whatever the relative gap."""
    unit = Decimal(1).scaleb(value.adjusted() - digits + 1)
    assume(abs(value - _at(value, unit)) != unit / 2)  # a tie rounds either way
    stated = _at(value, unit) + off * unit
    assume((stated / unit) % 10 != 0 and stated > 0)
    text = f"{stated:f}" if unit < 1 else f"{int(stated):,}"
    assert not _grounded((f"{value:f}",), f"It is {text}."), (value, text)


@settings(max_examples=100, deadline=None)
@given(
    values=st.lists(st.integers(-(10**6), 10**6), min_size=2, max_size=12),
    per_line=st.booleans(),
)
def test_sums_means_and_counts_of_one_output_or_of_all_ground(values: list[int], per_line: bool) -> None:
    outputs = ("\n".join(map(str, values)),) if per_line else tuple(map(str, values))
    total, mean = sum(values), Decimal(sum(values)) / len(values)
    reply = f"The total is {total}, the mean {mean.quantize(Decimal('0.01'))}, over {len(values)} values."
    assert _grounded(outputs, reply), reply


@settings(max_examples=100, deadline=None)
@given(
    start=st.integers(0, 10**4),
    count=st.integers(MAX_DERIVED_FROM + 1, 600),
    stated=st.integers(10**4, 10**7),
)
def test_with_many_values_printed_nothing_is_derived(start: int, count: int, stated: int) -> None:
    """Hundreds of values printed: a number that is none of them nor one of their aggregates is checked,
    though it is a sum of two, or one times a factor."""
    printed = list(range(start, start + count))
    assume(stated > start + count and stated % 10 != 0)  # read at its last digit
    assume(stated not in (sum(printed), count) and abs(stated - sum(printed) / count) > 1)
    assert not _grounded((str(printed),), f"It is {stated}.")


@settings(max_examples=100, deadline=None)
@given(exponent=st.integers(-8, 9), mantissa=st.integers(100, 999))
def test_superscript_exponents_are_digits(exponent: int, mantissa: int) -> None:
    value = Decimal(mantissa).scaleb(exponent - 2)
    sup = str(exponent).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    text = f"{mantissa / 100:.2f} × 10{sup}"
    assert _grounded((f"{value:f}",), f"It is {text}."), text
    assert not _grounded((f"{value * 2:f}",), f"It is {text}."), text


@settings(max_examples=100, deadline=None)
@given(value=st.integers(-(10**6), -10).map(lambda v: Decimal(v).scaleb(-1)))
def test_a_magnitude_grounds_a_negative_output(value: Decimal) -> None:
    assert _grounded((f"{value:f}",), f"It is {-value:f} below zero.")
