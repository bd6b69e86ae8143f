"""The one number reader of the reply policy: text to values, and whether a value is grounded (#45).

Numbers are compared as VALUES, never as strings. ``read_numbers`` finds every number written
with digits, in any script (``unicodedata.decimal``: ``٩١٢٣٤`` and ``９１２３４`` are 91234), in the
ways people write them:

- groupings with ``,`` ``.`` ``'`` ``’`` ``_``, a space, a no-break, thin or narrow no-break space
  (``86,400`` ``86.400`` ``86 400`` ``86'400``), the Arabic separators ``٬`` and ``٫``;
- a decimal point or a decimal comma (``5.93``, ``5,93``, ``1.234,5``);
- exponents (``8.64e4``, ``8.64×10^4``, ``8.64×10**4``, ``8.64×10⁴``; never ``11 × 101``, a product), the suffixes ``k`` and ``M`` (``86.4k``), percent (``45.67%``
  is 0.4567).

A written form that can be read two ways has both readings (``86.400`` is 86400 or 86.4; ``45.67%``
is 0.4567 or 45.67; ``86.4k`` is 86400 or 86.4): a number is grounded when one of its readings is.
Number words ("ninety-one thousand", "einundneunzig") are not values: reading them means reading
one language. A reply whose only numbers are words makes no claim this reader sees, so the number
checks neither pass nor fault it — the other rules of ``nudge.py`` judge it.

``Grounds`` holds the values a turn showed and answers ``holds(number)``: a stated value agrees with a
known one at the stated number's written precision — the value rounded at the stated number's last
significant digit is the stated number (``5.93`` for 5.928571, ``91,000`` for 91234; never ``86,800`` for
86400 nor ``100.4`` for 100) — or its magnitude agrees with a negative output (``minus 5.5`` in any
language, for -5.5), or it is an aggregate of the values of one output or of all outputs (``aggregates``:
their sum, mean, count; min and max are values), or a simple derivation of known values, bounded:
the sum, difference, product or ratio of two different known values of which one is an output (not only the
request's numbers: ``1234 * 5678`` worked out in the head is no result), only while the outputs showed
few values (``MAX_DERIVED_FROM``); an output's value times or divided by one of ``FACTORS`` (a unit
conversion of time: 86400 seconds is 1440 minutes, 24 hours). Nothing else is derived.

A power of ten is never a derivation. It is what a scale says — a word of some language ("thousand",
"Millionen", "mille", "millones", "万") or a sign the reader reads itself (``k``, ``M``, ``%``, an
exponent) — and a word is language: ``86.4 million`` and ``86.4 thousand`` are the same digits. So a
number is read as its digits and signs are written (``86.4 million`` is 86.4, and holds only where 86.4
itself, or a unit conversion of an output, is known); deriving "divided by 1000" from an output let
any scale word pass (#45: "86.4 million" grounded by 86,400).
"""

from __future__ import annotations

import bisect
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

_GROUP = ",.'’_ \u00a0\u2009\u202f\u066b\u066c"
"""Characters that may join digit groups (the last one may be a decimal point or comma)."""
_SPACES = " \u00a0\u2009\u202f"
_MARKS = ",.'’_\u066b\u066c"
_WORDY = r"[^\W\u3000-\u9fff\uac00-\ud7af]"
"""A word character of a script that spaces its words: a number glued to one is part of a name
(``x1``, ``abc123``); one glued to Chinese, Japanese or Korean text is a number (``一天有86400秒``)."""
_SUPERSCRIPT = "⁰¹²³⁴⁵⁶⁷⁸⁹"
"""Superscript digits: an exponent written as such (``8.64 × 10⁴``)."""
_FROM_SUPERSCRIPT = str.maketrans({**{ch: str(i) for i, ch in enumerate(_SUPERSCRIPT)}, "⁻": "-", "⁺": "+"})
_NUMBER = re.compile(
    rf"(?<!{_WORDY})(?<![.,])(?P<sign>[-−+](?=\d))?"
    rf"(?P<body>\d+(?:[{_MARKS}]\d+|[{_SPACES}]\d{{3}}(?!\d))*)"
    rf"(?P<exp>[eE][-+−]?\d+(?!{_WORDY})|\s?[×x·]\s?10(?:(?:\^|\*\*)(?P<pow>[-+−]?\d+)|(?P<sup>[⁻⁺]?[{_SUPERSCRIPT}]+)))?"
    rf"(?P<suffix>[kKM](?!{_WORDY})|\s?%)?"
    rf"(?!{_WORDY})"
)
MIN_SIGNIFICANT = 2
"""Trailing zeros of a whole number mark its precision (``91,000`` is 91234 to the thousand), but at
least this many of its digits are read as significant: ``100`` or ``2,000`` is a round number, not 149
or 2,449 rounded."""
FACTORS = (24.0, 60.0, 3600.0)
"""Conversions a stated value may apply to one output value (hours, minutes, seconds). No power of ten:
a scale is read from the number's own sign (``k``, ``M``, ``%``, an exponent) or not at all (the module)."""
MAX_KNOWN = 4000
"""Values kept (the first ones read): a bound on the work of one check."""
MAX_DERIVED_FROM = 24
"""Derivations (of two values, by a factor) are read only when the turn's outputs showed at most this
many values: with four operations on every pair, n values give about 2·n² derived numbers (and 14·n by
the factors) — with hundreds printed (``list(range(1000))``) any number is a sum of two or a value
times 24, and a derivation grounds nothing. 24 values give about 1,500, a small part of the numbers
of four digits a reply may make up."""
MAX_POWER = 300
"""The largest power of ten read from an exponent (a float ends near 1e308): a number beyond it (``1e999``,
a git hash such as ``4e60978``) is no value anyone checks, and is not read."""


@dataclass(frozen=True)
class Value:
    """One reading of a written number: its value and half the unit of its last written digit."""

    value: float
    half_unit: float


@dataclass(frozen=True)
class Stated:
    """A number as written: its text, whether it is significant, and its readings (alternatives).

    Each reading is a tuple of values: one for a number, several when the digits are a list
    (``10 20 30``, ``3.11.2``) rather than one grouped number.
    """

    text: str
    readings: tuple[tuple[Value, ...], ...]

    @property
    def significant(self) -> bool:
        """Two or more digits, or a decimal: ``7`` or ``3`` in prose is no result."""
        digits = sum(ch.isdigit() for ch in self.text)
        return digits >= 2 or any(v.half_unit < 0.5 for r in self.readings for v in r)


def _ascii(text: str) -> str:
    return "".join(str(unicodedata.decimal(ch)) if ch.isdigit() else ch for ch in text)


def _decimal(integer: str, fraction: str) -> Value:
    """A number as written and half the unit of its last significant digit (``MIN_SIGNIFICANT``)."""
    if fraction:
        return Value(float(f"{integer}.{fraction}"), 0.5 * 10.0 ** -min(len(fraction), 400))
    digits = integer.lstrip("0")
    zeros = min(len(digits) - len(digits.rstrip("0")), max(0, len(digits) - MIN_SIGNIFICANT), MAX_POWER)
    return Value(float(integer), 0.5 * 10.0**zeros)


def _power_of_ten(power: str) -> float | None:
    """``10 ** power`` as a float; None beyond ``MAX_POWER``."""
    digits = power.lstrip("+-")
    if len(digits) > 4 or abs(int(power)) > MAX_POWER:
        return None
    return 10.0 ** int(power)


def _finite(reading: tuple[Value, ...]) -> bool:
    """Every value of ``reading`` is a finite float (a 400-digit number reads as infinity)."""
    return all(math.isfinite(v.value) and math.isfinite(v.half_unit) for v in reading)


def _body_readings(body: str, scaled: bool) -> list[tuple[Value, ...]]:
    """The readings of digits joined by separators (see the module). ``scaled``: an exponent, a suffix
    or a percent follows, and one ``.`` or ``,`` is a decimal mark (``3.382k``, never 3382 thousand)."""
    groups = re.split(f"[{_GROUP}]", body)
    seps = re.findall(f"[{_GROUP}]", body)
    if not seps:
        return [(_decimal(body, ""),)]
    if scaled and len(seps) == 1 and seps[0] in ",.\u066b":
        return [(_decimal(groups[0], groups[1]),)]
    readings: list[tuple[Value, ...]] = []
    head, tail = groups[:-1], groups[-1]
    grouped = 1 <= len(groups[0]) <= 3 and all(len(g) == 3 for g in groups[1:])
    if grouped and len(set(seps)) == 1 and seps[0] not in "\u066b":
        readings.append((_decimal("".join(groups), ""),))  # 86,400 86.400 86 400 86'400
    last = seps[-1]
    if last in ",.\u066b" and all(s != last for s in seps[:-1]):
        lead_ok = len(head) == 1 or (1 <= len(head[0]) <= 3 and all(len(g) == 3 for g in head[1:]))
        if lead_ok and len(set(seps[:-1])) <= 1:
            readings.append((_decimal("".join(head), tail),))  # 5.93 5,93 1.234,5 86 400,5
    if not readings or any(s in _SPACES for s in seps):
        readings.append(tuple(_decimal(g, "") for g in groups))  # a list: 10 20 30, 3.11.2
    return readings


def _scaled(reading: tuple[Value, ...], factor: float, sign: float) -> tuple[Value, ...]:
    return tuple(Value(sign * v.value * factor, v.half_unit * factor) for v in reading)


def _stated(match: re.Match[str]) -> Stated | None:
    """The number ``match`` wrote; None when it is beyond a float's range (no value to check)."""
    body = _ascii(match["body"])
    sign = -1.0 if match["sign"] in ("-", "−") else 1.0
    exp = match["exp"]
    readings = _body_readings(body, bool(exp or match["suffix"]))
    if exp:
        power = (match["sup"] or "").translate(_FROM_SUPERSCRIPT) or _ascii(match["pow"] or exp[1:])
        factor = _power_of_ten(power.replace("−", "-"))
        if factor is None:
            return None
        readings = [_scaled(r, factor, sign) for r in readings if len(r) == 1]
    else:
        suffix = (match["suffix"] or "").strip()
        scale = {"k": 1e3, "K": 1e3, "M": 1e6, "%": 0.01}.get(suffix)
        plain = [_scaled(r, 1.0, sign) for r in readings]
        more = [_scaled(r, scale, sign) for r in readings if len(r) == 1] if scale else []
        readings = more + plain
    if not all(_finite(r) for r in readings):
        return None
    return Stated(match.group(0).strip(), tuple(readings))


def read_numbers(text: str) -> list[Stated]:
    """Every number written with digits in ``text``, with its readings (see the module)."""
    return [stated for m in _NUMBER.finditer(text) if (stated := _stated(m)) is not None]


def values(text: str) -> Iterator[float]:
    """Every value ``text`` may state (all readings of all its numbers)."""
    for written in written_values(text):
        yield from written


def written_values(text: str) -> Iterator[tuple[float, ...]]:
    """For each number written in ``text``, every value it may state (two readings of one written
    number are never two values of a derivation: ``526.282`` over ``526,282`` is no 1000)."""
    for stated in read_numbers(text):
        yield tuple(v.value for reading in stated.readings for v in reading)


def _agree(a: float, b: Value) -> bool:
    """``a`` rounded at the last significant digit of the stated ``b`` is ``b`` (86400 is ``86,400``,
    ``86.4k``, ``91,000`` for 91234; not ``86,800``, nor ``100.4`` for 100)."""
    return abs(a - b.value) <= b.half_unit * 1.000001


class Grounds:
    """The values a turn showed: ``outputs`` (printed by its actions) and ``given`` (the request's: never
    the code's own literals, which are what the model wrote). ``holds`` says whether a stated number is
    one of them or derived from them."""

    def __init__(
        self,
        outputs: Iterable[Sequence[float]],
        given: Iterable[float] = (),
        aggregates: Iterable[float] = (),
    ) -> None:
        self._written: dict[float, set[int]] = {}
        """For each output value, the written numbers (their index) it is a reading of."""
        for index, written in enumerate(outputs):
            for value in written:
                self._written.setdefault(value, set()).add(index)
        self.outputs = sorted(self._written)[:MAX_KNOWN]
        magnitudes = [-v for v in self.outputs if v < 0]
        self.known = sorted({*self.outputs, *magnitudes, *given, *aggregates})[:MAX_KNOWN]
        self.derives = len(self.outputs) <= MAX_DERIVED_FROM

    def holds(self, stated: Stated, *, derived: bool = True) -> bool:
        """One of ``stated``'s readings has only values that are known (or, with ``derived``, derived)."""
        return any(all(self._holds(v, derived) for v in r) for r in stated.readings)

    def _holds(self, value: Value, derived: bool) -> bool:
        if any(_agree(k, value) for k in _nearest(self.known, value.value)):
            return True
        if not derived or not self.derives:
            return False
        for out in self.outputs:
            if any(_agree(out * f, value) or _agree(out / f, value) for f in FACTORS):
                return True
            for target, derive in _operations(value.value, out):
                if any(_agree(derive(k), value) for k in _nearest(self.known, target) if self._two(out, k)):
                    return True
        return False

    def _two(self, out: float, other: float) -> bool:
        """``out`` and ``other`` are two numbers, not one, nor two readings of one written number."""
        return other != out and not (
            self._written.get(other, set()) and self._written[other] <= self._written[out]
        )


def aggregates(written: Sequence[Sequence[float]]) -> list[float]:
    """The sum, mean and count of the values of one text (each written number read one way only;
    one read two ways, ``86.400``, is left out): what a reply may state of an output as a whole."""
    plain = [w[0] for w in written if len(w) == 1]
    if len(plain) < 2:
        return []
    return [math.fsum(plain), math.fsum(plain) / len(plain), float(len(plain))]


def _nearest(known: list[float], target: float) -> list[float]:
    at = bisect.bisect_left(known, target)
    return known[max(0, at - 1) : at + 1]


def _operations(v: float, out: float) -> Iterator[tuple[float, Callable[[float], float]]]:
    """For each way ``v`` may be ``out`` combined with another known value: that value, if ``v`` is
    exact, and the combination (compared with ``v`` within its precision)."""
    yield v - out, lambda k: out + k
    yield v + out, lambda k: k - out
    yield out - v, lambda k: out - k
    if out:
        yield v / out, lambda k: out * k
        yield v * out, lambda k: k / out
    if v:
        yield out / v, lambda k: out / k if k else float("inf")


__all__ = [
    "FACTORS",
    "MAX_DERIVED_FROM",
    "MAX_KNOWN",
    "MIN_SIGNIFICANT",
    "aggregates",
    "Grounds",
    "Stated",
    "Value",
    "read_numbers",
    "values",
    "written_values",
]
