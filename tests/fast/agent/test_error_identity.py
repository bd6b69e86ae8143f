"""#40: one normaliser decides when two errors are the same, whatever changes between attempts (kernel-free).

Generated errors are wrapped in what differs from one attempt to the next — a traceback's frames,
paths, line and cell numbers, addresses, ids, timestamps, colours, spacing — and must normalise to
the same text; different exception lines must stay different.
"""

from __future__ import annotations

from datetime import datetime

from hypothesis import given
from hypothesis import strategies as st

from freeact_tui.agent.policy.errors import normalise_error

NAMES = st.sampled_from(["ValueError", "KeyError", "ZeroDivisionError", "FileNotFoundError", "RuntimeError"])
WORDS = (
    st.text(alphabet="abcdefghijklmnopqrstuvwxyzäöüß ", min_size=1, max_size=30).map(str.strip).filter(bool)
)
SEGMENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_-.", min_size=1, max_size=12).filter(
    lambda s: s.strip(".")
)
PATHS = st.lists(SEGMENT, min_size=1, max_size=5).map(lambda parts: "/" + "/".join(parts))
HEX = st.integers(min_value=16**4, max_value=16**12).map(lambda n: f"0x{n:x}")
STAMP = st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(2100, 1, 1)).map(
    lambda d: d.strftime("%Y-%m-%d %H:%M:%S")
)


@st.composite
def attempt(draw: st.DrawFn, name: str, message: str, kind: int) -> str:
    """One attempt's output of the error ``name: message``, with everything that varies drawn anew."""
    path = draw(PATHS)
    line = draw(st.integers(min_value=1, max_value=9999))
    detail = ["", f" at {draw(HEX)}", f" in {path}", f" (line {line})", f" [{draw(STAMP)}]"][kind]
    frames = draw(
        st.lists(
            st.builds(lambda p, n: f'  File "{p}", line {n}, in <module>', PATHS, st.integers(1, 500)),
            max_size=3,
        )
    )
    colour = draw(st.sampled_from(["", "\x1b[0;31m"]))
    reset = "\x1b[0m" if colour else ""
    head = draw(
        st.sampled_from(["", "Traceback (most recent call last):\n", f"Cell In[{line}], line {line}\n"])
    )
    body = "\n".join(frames)
    space = draw(st.sampled_from([" ", "  ", "\t"]))
    return f"{head}{body}\n{colour}{name}:{space}{message}{detail}{reset}\n" + draw(
        st.sampled_from(["", "\n\n"])
    )


@given(st.data(), NAMES, WORDS, st.integers(0, 4))
def test_the_same_error_in_another_attempt_normalises_the_same(
    data: st.DataObject, name: str, message: str, kind: int
) -> None:
    first = normalise_error(data.draw(attempt(name, message, kind)))
    second = normalise_error(data.draw(attempt(name, message, kind)))
    assert first == second and first.startswith(f"{name}: {' '.join(message.split())}")


@given(NAMES, WORDS, PATHS, PATHS, HEX, HEX, STAMP, STAMP, st.integers(1, 999), st.integers(1, 999))
def test_what_varies_between_attempts_is_stripped(
    name: str, message: str, p1: str, p2: str, a1: str, a2: str, t1: str, t2: str, n1: int, n2: int
) -> None:
    def one(path: str, address: str, stamp: str, line: int) -> str:
        return f"{stamp} {name}: {message} at {address} in {path}, line {line}"

    assert normalise_error(one(p1, a1, t1, n1)) == normalise_error(one(p2, a2, t2, n2))


@given(st.text(max_size=200))
def test_normalising_is_idempotent(text: str) -> None:
    once = normalise_error(text)
    assert normalise_error(once) == once


@given(NAMES, NAMES, WORDS, WORDS)
def test_different_errors_stay_different(n1: str, n2: str, m1: str, m2: str) -> None:
    if (n1, " ".join(m1.split())) != (n2, " ".join(m2.split())):
        assert normalise_error(f"{n1}: {m1}") != normalise_error(f"{n2}: {m2}")


NUMBER = st.one_of(
    st.integers(min_value=-(10**12), max_value=10**12).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(min_value=0, max_value=16**10).map(lambda n: f"0x{n:x}"),
    st.floats(min_value=1e9, max_value=2e9).map(str),  # an epoch time, time.time()
)
TEMPLATE = st.lists(
    st.one_of(WORDS, st.just("{}"), st.just("name_{}"), st.just("'{}'")), min_size=1, max_size=6
)


@given(st.data(), NAMES, TEMPLATE)
def test_errors_that_differ_only_in_numbers_are_the_same_error(
    data: st.DataObject, name: str, template: list[str]
) -> None:
    """A counter, a random value, an epoch time in the message: every attempt is the same error."""

    def fill() -> str:
        return " ".join(part.replace("{}", data.draw(NUMBER)) if "{}" in part else part for part in template)

    assert normalise_error(f"{name}: {fill()}") == normalise_error(f"{name}: {fill()}")


def test_the_attack_corpus_of_numbered_errors() -> None:
    """The hostile model's errors: one error each, whatever the number."""
    pairs = [
        ("ValueError: attempt 1", "ValueError: attempt 2"),
        (
            "NameError: name 'undefined_var_7' is not defined",
            "NameError: name 'undefined_var_8' is not defined",
        ),
        ("RuntimeError: 1764397200.123456", "RuntimeError: 1764397201.5"),
        ("ValueError: 8412393", "ValueError: 12"),
        ("ValueError: got 1e-05", "ValueError: got 3.5E+12"),
    ]
    for first, second in pairs:
        assert normalise_error(first) == normalise_error(second)
    assert normalise_error("ValueError: attempt 1") != normalise_error("KeyError: attempt 1")
    assert normalise_error("ValueError: attempt 1") != normalise_error("ValueError: retry 1")


@given(
    name=st.from_regex(r"[A-Z][A-Za-z]{0,12}(Error|Exception)", fullmatch=True),
    message=st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=40),
)
def test_the_kind_of_an_error_is_its_exception_whatever_its_message(name: str, message: str) -> None:
    """#40: a message made up anew each attempt (a random word, an invented name) keeps its kind."""
    from freeact_tui.agent.policy.errors import error_kind

    trace = f"Traceback (most recent call last):\n  Cell In[3], line 1\n{name}: {message}"
    assert error_kind(trace) == name
    assert error_kind(f"\x1b[31m{name}\x1b[0m: {message}") == name
