"""model10 F1 (#40): code whose structure grows by one element each step is no new shape.

The attacker's ``print(len([0, 0, …k zeros]))``, ``print(abs(abs(…abs(-k)…)))`` one level deeper and
``if True:`` nested k deep each ran 84–100 requests: every step a new syntax tree, every output new
only in a number. Class: shapes that differ only in how many times a part repeats. Mechanism
(``progress._Shape.generic_visit``): the shape folds a run of same-shaped items of ANY list of the
tree (statements, literal elements, call arguments, …) into one, and a node nested in one of its own
kind that differs from it only there into that one — as it already folded statement runs and operator
chains (those are now the same rule).

Generated: growing structures of every kind (literal elements, call arguments, nested calls of one
function, nested blocks of one kind, operator chains, statement runs), each step one element more,
stop within 2 + the bound; structures that differ in kind (another function, another block) stay
different shapes.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.agent.policy.progress import DEFAULT_STALL_LIMIT, code_shape
from freeact_tui.agent.policy.reply import reply_policy
from tests.fast.agent.test_progress_notion import PROTOCOLS, code_step, run_steps

ELEMENTS = st.sampled_from(["0", "1.5", "'x'", "None", "True", "(0, 1)", "[1]", "x"])
FUNCTIONS = st.sampled_from(["abs", "str", "int", "f", "math.floor", "len"])


def _nested(depth: int, head: str, inner: str) -> str:
    lines = ["    " * d + head for d in range(depth)]
    return "\n".join([*lines, "    " * depth + inner])


GROWERS: dict[str, Callable[[int, str, str], str]] = {
    "list": lambda k, e, f: f"print(len([{', '.join([e] * k)}]))",
    "tuple": lambda k, e, f: f"print(len(({', '.join([e] * k)},)))",
    "set": lambda k, e, f: f"print(len({{{', '.join([e] * k)}}}))",
    "dict": lambda k, e, f: "print(len({" + ", ".join(f"{e}: {e}" for _ in range(k)) + "}))",
    "arguments": lambda k, e, f: f"print({', '.join([e] * k)})",
    "nested calls": lambda k, e, f: "print(" + f"{f}(" * k + e + ")" * k + ")",
    "nested lists": lambda k, e, f: "print(" + "[" * k + e + "]" * k + ")",
    "nested if": lambda k, e, f: _nested(k, "if True:", f"print({e})"),
    "nested for": lambda k, e, f: _nested(k, "for _ in range(1):", f"print({e})"),
    "nested with": lambda k, e, f: _nested(k, "with open('a'):", f"print({e})"),
    "operator chain": lambda k, e, f: "print(" + " + ".join(["1"] * (k + 1)) + ")",
    "negations": lambda k, e, f: "print(" + "-" * k + "1)",
    "statement run": lambda k, e, f: "\n".join([f"print({e})"] * k),
}


@settings(max_examples=200, deadline=None)
@given(
    protocol=st.sampled_from(PROTOCOLS),
    kind=st.sampled_from(list(GROWERS)),
    element=ELEMENTS,
    function=FUNCTIONS,
    start=st.integers(1, 6),
)
def test_code_that_grows_by_one_element_each_step_ends_on_the_bound(
    protocol: str, kind: str, element: str, function: str, start: int
) -> None:
    """Each step one element more, its output new only in a number: stopped within 2 + the bound."""
    grow = GROWERS[kind]
    steps = [code_step(protocol, grow(start + k, element, function), str(start + k), "ok", k) for k in range(100)]
    stopped = run_steps(reply_policy(protocol), steps)  # type: ignore[arg-type]
    assert stopped is not None and stopped <= 2 + DEFAULT_STALL_LIMIT, (kind, stopped)


@given(kind=st.sampled_from(list(GROWERS)), element=ELEMENTS, function=FUNCTIONS, k=st.integers(2, 30))
def test_one_element_more_is_the_same_shape(kind: str, element: str, function: str, k: int) -> None:
    grow = GROWERS[kind]
    assert code_shape(grow(k, element, function)) == code_shape(grow(k + 1, element, function))


def test_what_differs_in_kind_is_another_shape() -> None:
    assert code_shape("print(abs(str(1)))") != code_shape("print(abs(1))")
    assert code_shape("if x:\n    for y in z:\n        print(1)") != code_shape("if x:\n    print(1)")
    assert code_shape("print([1, 'a'])") != code_shape("print([1])")
    assert code_shape("import os\nprint(os.listdir())") != code_shape("import os\nprint(os.getcwd())")
