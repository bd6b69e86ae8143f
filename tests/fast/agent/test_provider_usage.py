"""#40 (hostile tester): numbers from the provider are not trusted as given. ``prompt_tokens: 1e30``
showed as-is in headless JSON, floats passed as token counts, and the next ``--resume`` turn compacted
a tiny conversation. One place takes provider usage (``agent/usage.py`` ``sane_usage``): a count is a
whole number from 0 to ``MAX_TOKENS``, anything else is missing and estimated (kernel-free)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.usage import RequestUsage

from freeact_tui.agent.usage import MAX_TOKENS, UsageMeter, sane_count, sane_usage, stored_usage, usage_record
from freeact_tui.events import UsageUpdate

COUNTS = st.one_of(
    st.integers(0, MAX_TOKENS),
    st.integers(min_value=MAX_TOKENS + 1),
    st.integers(max_value=-1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
)


def reply(input_tokens: object, output_tokens: object) -> ModelResponse:
    usage = RequestUsage(input_tokens=input_tokens, output_tokens=output_tokens)  # type: ignore[arg-type]
    return ModelResponse(parts=[TextPart("Answer here.")], usage=usage, finish_reason="stop")


def sane(value: object) -> bool:
    return type(value) is int and 0 <= value <= MAX_TOKENS


def a_count(value: object) -> bool:
    """What a count may be as given: a whole number (an int, or a float such as ``12.0``) in bounds."""
    if isinstance(value, float):
        return math.isfinite(value) and value.is_integer() and 0 <= value <= MAX_TOKENS
    return sane(value)


@given(COUNTS, COUNTS)
def test_every_count_taken_is_a_whole_number_in_bounds(input_tokens: object, output_tokens: object) -> None:
    checked = sane_usage(reply(input_tokens, output_tokens))
    assert sane(checked.usage.input_tokens) and sane(checked.usage.output_tokens)
    usage = UsageMeter.of_response(checked, estimated_input=40)
    assert sane(usage.input_tokens) and sane(usage.output_tokens)
    if not (a_count(input_tokens) and a_count(output_tokens)):  # no count: estimated, as for a server with none
        assert usage.estimated and usage.input_tokens == 40
    elif input_tokens or output_tokens:
        assert (usage.input_tokens, usage.output_tokens) == (input_tokens, output_tokens)


@given(st.floats())
def test_a_float_is_a_count_only_when_it_is_a_whole_number_in_bounds(value: float) -> None:
    expected = int(value) if math.isfinite(value) and value.is_integer() and 0 <= value <= MAX_TOKENS else 0
    assert sane_count(value) == expected and type(sane_count(value)) is int


def test_the_testers_numbers() -> None:
    for given_in, given_out in [(10**30, 5), (1.5e300, 3.7), (-5, -99_999_999), (2**70, 2**70)]:
        usage = UsageMeter.of_response(sane_usage(reply(given_in, given_out)), estimated_input=12)
        assert usage.estimated and (usage.input_tokens, usage.output_tokens) == (12, 3), (given_in, given_out)


def test_a_session_that_stored_an_impossible_count_restores_none_of_it() -> None:
    stored = reply(0, 0)
    stored.metadata = usage_record(UsageUpdate(10**30, 5, 1))
    usage = stored_usage(stored)
    assert usage is not None and usage.input_tokens == 0 and usage.output_tokens == 5
