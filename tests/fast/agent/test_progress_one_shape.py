"""model10 F2 (#40): a loop of ONE shape whose results vary is bounded.

``print('checking alpha then delta now')`` with two other words each step ran 30 requests;
``_tag='k<n>'`` + ``print(' '.join(random.sample(keyword.kwlist, 6)))`` 100. The module says new output
alone never counts, but every new result made the step new. Class: a loop of one (folded) shape whose
results vary. Mechanism (``TurnProgress``): a shape counts as progress at most ``shape_limit`` times
(``max_steps_of_one_shape``, default ``DEFAULT_SHAPE_LIMIT``); past it such a step is no progress and
the stop says the same code ran that often.

Generated: loops of one shape with results that share nothing stop within the shape limit + the stall
bound, whatever the limit; work of different shapes each step never stops.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.agent.policy.progress import DEFAULT_SHAPE_LIMIT, DEFAULT_STALL_LIMIT, StopTurn
from freeact_tui.agent.policy.reply import reply_policy
from tests.fast.agent.test_progress_notion import PROTOCOLS, code_step, run_steps

WORDS = st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=9), min_size=2, max_size=6)


@settings(max_examples=100, deadline=None)
@given(protocol=st.sampled_from(PROTOCOLS), data=st.data(), shape_limit=st.integers(1, 12))
def test_a_loop_of_one_shape_with_varying_results_is_bounded(
    protocol: str, data: st.DataObject, shape_limit: int
) -> None:
    """Each step the same code with another string, printing words new to the turn: stopped after
    ``shape_limit`` steps of progress and the stall bound."""
    steps = []
    for k in range(60):
        words = " ".join(data.draw(WORDS)) + f" {'q' * (k + 1)}"  # never one word from an earlier result
        steps.append(code_step(protocol, f"_tag = 'k{k}'\nprint({words!r})", words, "ok", k))
    policy = reply_policy(protocol, shape_limit=shape_limit)  # type: ignore[arg-type]
    stopped = run_steps(policy, steps)
    assert stopped is not None and stopped <= shape_limit + DEFAULT_STALL_LIMIT, stopped


W = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa".split()


def test_the_stop_says_the_same_code_ran_that_often() -> None:
    """The attacker's two_words: two other words each step (30 requests before)."""
    policy = reply_policy("tools")
    for k in range(40):
        said = f"checking {W[k % 16]} then {W[(k * 7 + 3) % 16]} now"
        verdict = policy.after_step(code_step("tools", f"print({said!r})", said, "ok", k))
        if isinstance(verdict, StopTurn):
            assert f"ran {DEFAULT_SHAPE_LIMIT} times" in verdict.message and "one cell" in verdict.message
            assert k + 1 == DEFAULT_SHAPE_LIMIT + DEFAULT_STALL_LIMIT
            return
    raise AssertionError("never stopped")


SHAPES = [
    "print(open({s!r}).read())",
    "import os\nprint(os.listdir({s!r}))",
    "print(len({s!r}))",
    "x = {s!r}.upper()\nprint(x)",
    "for line in open({s!r}):\n    print(line)",
    "import json\nprint(json.dumps({{'k': {s!r}}}))",
    "print(sorted({s!r}))",
    "print({s!r}.split())",
    "import pathlib\nprint(pathlib.Path({s!r}).stat())",
    "def f(a):\n    return a * 2\nprint(f({s!r}))",
    "print({s!r}.count('a'), {s!r}.find('b'))",
    "try:\n    print(int({s!r}))\nexcept ValueError as e:\n    print(e)",
]


@settings(max_examples=60, deadline=None)
@given(protocol=st.sampled_from(PROTOCOLS), data=st.data())
def test_different_code_each_step_never_stops(protocol: str, data: st.DataObject) -> None:
    steps = []
    for k, shape in enumerate(SHAPES):
        words = " ".join(data.draw(WORDS)) + f" {'q' * (k + 1)}"
        steps.append(code_step(protocol, shape.format(s=f"f{k}.txt"), words, "ok", k))
    assert run_steps(reply_policy(protocol), steps) is None  # type: ignore[arg-type]
