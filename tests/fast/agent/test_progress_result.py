"""#40 leftover (model9): rotating the code's shape around an unchanged result is no progress.

``print(abs(1))``, ``print(str(1))``, ``print(int(1))`` … each printed the same ``1`` and ran 18
requests: each step's SHAPE was new, and a new shape counted as progress although the RESULT did not
change. Class: progress decided by the code's shape when the result is what did not change. Mechanism
(``progress.TurnProgress``): an action that worked is new only while its printed result (exactly, spacing
aside) was printed fewer than ``RESULT_REPEATS`` times in the turn, whatever code printed it. A step that
prints nothing (a file written) is still judged by its shape: its result is not in its output.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.agent.policy.progress import DEFAULT_STALL_LIMIT, RESULT_REPEATS
from freeact_tui.agent.policy.reply import reply_policy
from tests.fast.agent.test_progress_notion import PROTOCOLS, code_step, run_steps

BUILTINS = ["abs", "str", "int", "float", "round", "repr", "hash", "bool", "len", "min", "max", "sum"]
SHAPES = [  # code of different shapes (not one word apart), each a way to print one value
    "print({b}({v}))",
    "x = {b}({v})\nprint(x)",
    "for i in [{v}]:\n    print({b}(i))",
    "def f():\n    return {b}({v})\nprint(f())",
    "import math\nprint(math.floor({v}))",
    "y = [{v}]\nprint(y[0])",
    "print({v} if True else 0)",
    "print(*[{v}])",
    "import os\nprint(len(os.sep) * {v})",
]
RESULTS = st.sampled_from(["1", "False", "config unchanged: debug = true", "[]", "0.0", "None"])


@st.composite
def rotating(draw: st.DrawFn) -> list[str]:
    """20 different pieces of code (shapes and builtins rotated), none of them the same code twice."""
    pool = [s.format(b=b, v=v) for s in SHAPES for b in BUILTINS for v in (1, "'1'")]
    return draw(st.lists(st.sampled_from(sorted(set(pool))), min_size=20, max_size=20, unique=True))


@settings(max_examples=80, deadline=None)
@given(protocol=st.sampled_from(PROTOCOLS), codes=rotating(), result=RESULTS)
def test_new_shapes_around_one_unchanged_result_stop_on_the_bound(protocol: str, codes: list[str], result: str) -> None:
    policy = reply_policy(protocol)  # type: ignore[arg-type]
    steps = [code_step(protocol, code, result, "ok", n) for n, code in enumerate(codes)]
    stopped = run_steps(policy, steps)
    assert stopped is not None and stopped <= RESULT_REPEATS + DEFAULT_STALL_LIMIT, (protocol, stopped)


@settings(max_examples=60, deadline=None)
@given(
    protocol=st.sampled_from(PROTOCOLS),
    order=st.permutations(SHAPES),
    builtin=st.sampled_from(BUILTINS),
    results=st.lists(RESULTS, min_size=len(SHAPES), max_size=len(SHAPES)),
)
def test_new_shapes_with_new_results_are_never_cut_short(
    protocol: str, order: list[str], builtin: str, results: list[str]
) -> None:
    """Code of a new shape each step, each printing another result, or a result printed at most
    ``RESULT_REPEATS`` times: progress every step (``n`` tells the results apart)."""
    policy = reply_policy(protocol)  # type: ignore[arg-type]
    steps = [
        code_step(protocol, shape.format(b=builtin, v=1), f"{results[n]} (step {n // RESULT_REPEATS})", "ok", n)
        for n, shape in enumerate(order)
    ]
    assert run_steps(policy, steps) is None


def test_one_more_way_to_the_same_result_is_progress_once() -> None:
    """Checking a result another way is a step; a third way to it is not."""
    policy = reply_policy("auto")
    first = code_step("auto", "print(24 * 60 * 60)", "86400", "ok", 1)
    check = code_step("auto", "import datetime\nprint(int(datetime.timedelta(days=1).total_seconds()))", "86400", "ok", 2)
    assert run_steps(policy, [first, check]) is None
    assert policy.meter.faults == []
