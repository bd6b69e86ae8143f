"""Only what was shown grounds a number, read as its digits and signs are written (#45 leftovers).

Two classes of "a number no output showed passes as grounded":

- a scale said by a word: ``86.4 million`` passed for a printed 86,400 (86.4 is 86,400 / 1000, and the
  word was never read). A scale word is language, so a number followed by any word is read as its digits
  (``numbers.FACTORS`` has no power of ten): generated values at generated scales, written in several
  languages' number formats with scale words of several languages (or any word at all), glued to
  Chinese/Japanese text or spaced — the stated digits are checked unless they are themselves a value
  the output holds (or a conversion of time units of it).
- the model's own code: ``x = 10982432`` in an action, then "10,982,432" in the answer passed. Only the
  outputs and the request ground numbers: generated literals, stated in generated formats, are checked.

No phrase of any language decides anything: the words are drawn, never matched.
"""

from __future__ import annotations

import string
from decimal import Decimal

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from freeact_tui.agent.policy.grounding import unchecked_numbers
from tests.fast.agent.test_reply_numbers import FORMATS, NNBSP
from tests.fast.agent.test_reply_policy import prompt, tool_step

SCALE_WORDS = [
    "thousand", "million", "billion", "Tausend", "Millionen", "Milliarden", "mille", "millions",
    "milliards", "mil", "millones", "mil millones", "tysięcy", "миллиона",
]  # fmt: skip
GLUED_WORDS = ["千", "万", "億", "万秒", "百万"]  # unspaced scripts: the word follows the digits directly
TEMPLATES = [
    "The answer is {n}.",
    "Die Antwort ist {n}.",
    "La réponse est {n}.",
    "La respuesta es {n}.",
    "答えは{n}です。",
    "一天有{n}。",
]
TIME_UNITS = (24, 60, 3600)
"""The conversions of an output a stated number may be (hours, minutes, seconds): the test's own oracle."""
POINTS = {"English": (",", "."), "German": (".", ","), "French": (NNBSP, ","), "Swiss": ("'", ".")}


def _written(value: Decimal, places: int, form: str) -> str:
    group, point = POINTS[form]
    text = f"{value:,.{places}f}".replace(",", "\0").replace(".", point).replace("\0", group)
    return text


def _near(stated: Decimal, places: int, known: float) -> bool:
    """``known`` rounds to ``stated`` at its written precision (with the reader's tolerance, widened)."""
    return abs(Decimal(known) - stated) <= Decimal(5) * Decimal(10) ** -(places + 1) * Decimal("1.01")


def _shown(stated: Decimal, places: int, output: int) -> bool:
    """The stated digits are a value the output holds, or one of its conversions of time units."""
    candidates = [output, *(output * f for f in TIME_UNITS), *(output / f for f in TIME_UNITS)]
    return any(_near(stated, places, c) for c in candidates)


WORDS = st.one_of(
    st.sampled_from(SCALE_WORDS).map(lambda w: " " + w),
    st.sampled_from(GLUED_WORDS),
    st.text(alphabet=string.ascii_letters + "äöüéñ", min_size=2, max_size=9).map(lambda w: " " + w),
)


@settings(max_examples=300, deadline=None)
@given(
    output=st.integers(min_value=1_000, max_value=10**11),
    power=st.sampled_from([3, 4, 6, 8, 9]),
    places=st.integers(min_value=1, max_value=3),
    form=st.sampled_from(sorted(POINTS)),
    word=WORDS,
    template=st.sampled_from(TEMPLATES),
)
def test_a_number_with_a_scale_word_is_read_as_its_digits(
    output: int, power: int, places: int, form: str, word: str, template: str
) -> None:
    stated = round(Decimal(output) / Decimal(10) ** power, places)
    assume(stated >= Decimal("0.1"))
    assume(not _shown(stated, places, output))
    # "1.000" is also one thousand grouped (the reader's second reading): that reading must not be shown
    assume(places != 3 or not _shown(stated * 1000, 0, output))
    number = _written(stated, places, form)
    text = template.format(n=number + word)
    turn = [prompt("Wie viel ergibt die Rechnung?"), *tool_step("print(compute())", str(output))]
    assert unchecked_numbers(text, turn), text  # was: grounded, as the output divided by a power of ten


@settings(max_examples=300, deadline=None)
@given(
    output=st.integers(min_value=10, max_value=10**9),
    literal=st.integers(min_value=10, max_value=10**9),
    form=st.sampled_from(sorted(FORMATS)),
    template=st.sampled_from(TEMPLATES),
)
def test_a_number_only_the_code_wrote_grounds_nothing(output: int, literal: int, form: str, template: str) -> None:
    """Metamorphic: writing the number into the code changes nothing — what the same turn without it
    checks, the turn with it checks too."""
    text = template.format(n=FORMATS[form](float(literal), 0))
    without = [prompt("Was ergibt die Rechnung?"), *tool_step("print(compute())", str(output))]
    assume(unchecked_numbers(text, without))  # the output alone does not hold it
    code = f"x = {literal}\nprint(compute(x))"
    turn = [prompt("Was ergibt die Rechnung?"), *tool_step(code, str(output))]
    assert unchecked_numbers(text, turn), (text, code)  # was: grounded by the literal in the code


def test_the_digits_themselves_still_ground_whatever_word_follows() -> None:
    """Read as written: the digits an output shows are grounded with any word after them."""
    turn = [prompt("Wie viel?"), *tool_step("print(compute())", "86.4")]
    for text in ("86.4 million", "86,4 Millionen", "86,4 millions", "一天有86.4万秒"):
        assert unchecked_numbers(text, turn) == [], text
