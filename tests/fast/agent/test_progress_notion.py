"""#40 (hostile tester): progress is evidence the turn moves toward an answer, never the novelty of a
result the model controls — a clock or counter printed by the same code, an exception class invented
each time, kinds of error in rotation, the same subagent task again (kernel-free: the policy's
reading of generated steps, in every protocol)."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from freeact_tui.agent.policy.outcomes import RESULTS_KEY
from freeact_tui.agent.policy.progress import (
    DEFAULT_FAILING_LIMIT,
    DEFAULT_STALL_LIMIT,
    STEP_RULES,
    StopTurn,
)
from freeact_tui.agent.policy.reply import ReplyPolicy, reply_policy
from freeact_tui.toolcalls import CODE_TOOL

PROTOCOLS = ["tools", "text", "auto"]
BUILTIN_KINDS = [
    "ValueError",
    "KeyError",
    "TypeError",
    "IndexError",
    "RuntimeError",
    "AttributeError",
    "LookupError",
    "OSError",
    "ArithmeticError",
    "NotImplementedError",
]


def code_step(protocol: str, code: str, output: str, outcome: str, n: int) -> list[ModelMessage]:
    """One step that ran ``code``: a code tool call (``tools``, ``auto``) or a block (``text``)."""
    if protocol == "text":
        results = [{"id": f"text_{n}", "code": code, "outcome": outcome, "output": output}]
        return [
            ModelResponse(parts=[TextPart(f"```python\n{code}\n```")]),
            ModelRequest(parts=[UserPromptPart(f"Output:\n{output}")], metadata={RESULTS_KEY: results}),
        ]
    call = ToolCallPart(CODE_TOOL, {"code": code}, tool_call_id=f"c{n}")
    ret = ToolReturnPart(CODE_TOOL, output, tool_call_id=f"c{n}", metadata={"outcome": outcome})
    return [ModelResponse(parts=[call]), ModelRequest(parts=[ret])]


def subagent_step(task: str, answer: str, n: int) -> list[ModelMessage]:
    """One step that delegated ``task`` to a subagent, which answered ``answer``."""
    call = ToolCallPart("subagent_task", {"prompt": task}, tool_call_id=f"s{n}")
    ret = ToolReturnPart("subagent_task", answer, tool_call_id=f"s{n}", metadata={"outcome": "ok"})
    return [ModelResponse(parts=[call]), ModelRequest(parts=[ret])]


def word(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8))


def behaviour(kind: str, protocol: str, n: int, rng: random.Random) -> list[ModelMessage]:
    """Step ``n`` of a model that keeps doing ``kind`` (what the tester's scripted server did)."""
    match kind:
        case "clock":  # the same code, a new output each time
            return code_step(protocol, "import time; print(time.time())", str(rng.random() * 1e9), "ok", n)
        case "counter":
            return code_step(protocol, "n += 1; print(n)", str(n), "ok", n)
        case "counter literal":  # the same code but for a number written into it
            return code_step(protocol, f"print({n} + 1)", str(n + 1), "ok", n)
        case "invented class":
            name = word(rng).capitalize()
            code = f"class {name}(Exception): pass\nraise {name}('boom')"
            return code_step(protocol, code, f"Traceback (most recent call last):\n{name}: boom", "error", n)
        case "rotating kinds":
            kind_name = BUILTIN_KINDS[n % len(BUILTIN_KINDS)]
            return code_step(protocol, f"raise {kind_name}('boom')", f"{kind_name}: boom", "error", n)
        case "random message":
            text = word(rng)
            return code_step(protocol, f"raise ValueError('{text}')", f"ValueError: {text}", "error", n)
        case "subagent":
            return subagent_step("Say one random word.", word(rng), n)
    raise AssertionError(kind)


LOOPS = [
    "clock",
    "counter",
    "counter literal",
    "invented class",
    "rotating kinds",
    "random message",
    "subagent",
]

NEW_WORK = [
    "import os\nprint(os.getcwd())",
    "x = sum(range(10))\nprint(x)",
    "with open('a.txt', 'w') as f:\n    f.write('hi')",
    "print(open('a.txt').read())",
    "import json\nprint(json.dumps({'a': x}))",
    "!ls",
    "y = [i * i for i in range(x)]\nprint(y[-1])",
    "%%bash\necho done",
]


def work_step(protocol: str, i: int, n: int) -> list[ModelMessage]:
    return code_step(protocol, NEW_WORK[i], f"output {i}", "ok", n)


def run_steps(policy: ReplyPolicy, steps: list[list[ModelMessage]]) -> int | None:
    """The step (1-based) the policy stops the turn at, if it does."""
    for k, step in enumerate(steps, 1):
        if isinstance(policy.after_step(step), StopTurn):
            return k
    return None


@settings(max_examples=150, deadline=None)
@given(
    protocol=st.sampled_from(PROTOCOLS),
    prefix=st.lists(st.sampled_from(["work", *LOOPS]), max_size=8),
    loop=st.sampled_from(LOOPS),
    seed=st.integers(0, 2**32),
)
def test_a_loop_of_model_made_novelty_ends_within_the_bound(
    protocol: str, prefix: list[str], loop: str, seed: int
) -> None:
    """Whatever came before, a model that keeps doing one of the tester's loops is stopped within
    ``max_failing_steps`` steps of the loop (plus a few steps of real progress in the prefix)."""
    rng = random.Random(seed)
    policy = reply_policy(protocol)  # type: ignore[arg-type]
    work = itertools.count()
    steps: list[list[ModelMessage]] = []
    for n, kind in enumerate(prefix):
        i = next(work) if kind == "work" else None
        steps.append(work_step(protocol, i, n) if i is not None else behaviour(kind, protocol, n, rng))
    looped = [behaviour(loop, protocol, len(prefix) + k, rng) for k in range(60)]
    stopped = run_steps(policy, steps + looped)
    assert stopped is not None, (protocol, prefix, loop)
    # the loop's first step may still be new (a first success, a first failure)
    assert stopped <= len(prefix) + 1 + max(DEFAULT_FAILING_LIMIT, DEFAULT_STALL_LIMIT), (
        protocol,
        prefix,
        loop,
        stopped,
    )


@settings(max_examples=60, deadline=None)
@given(
    protocol=st.sampled_from(PROTOCOLS),
    order=st.permutations(range(len(NEW_WORK))),
    failures=st.lists(st.integers(0, len(NEW_WORK) - 1), max_size=3, unique=True),
)
def test_genuinely_new_steps_are_never_cut_short(
    protocol: str, order: list[int], failures: list[int]
) -> None:
    """Eight different successful steps (some after one new failure each) then an answer: no stop."""
    policy = reply_policy(protocol)  # type: ignore[arg-type]
    steps: list[list[ModelMessage]] = []
    for n, i in enumerate(order):
        if i in failures:
            steps.append(
                code_step(protocol, f"{NEW_WORK[i]}\nraise KeyError({i})", f"KeyError: {i}", "error", 100 + n)
            )
        steps.append(work_step(protocol, i, n))
    assert run_steps(policy, steps) is None, (protocol, order, failures)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    ("loop", "stop_at"),
    [
        ("clock", 1 + DEFAULT_STALL_LIMIT),  # the first run is new; then the same code, whatever it printed
        ("counter", 1 + DEFAULT_STALL_LIMIT),
        ("counter literal", 1 + DEFAULT_STALL_LIMIT),
        ("subagent", 1 + DEFAULT_STALL_LIMIT),  # the same task again is the same step
        ("invented class", 1 + DEFAULT_STALL_LIMIT),  # the tester's code raises with one message: one error
        ("rotating kinds", DEFAULT_FAILING_LIMIT),  # new errors, but failing steps in a row are bounded
    ],
)
def test_the_testers_loops_stop_where_the_rules_say(protocol: str, loop: str, stop_at: int) -> None:
    """The tester's runs went to the request budget (100, 200 with a subagent; 33 rotating kinds)."""
    if loop == "subagent" and protocol == "text":
        pytest.skip("the text protocol calls no tools")
    rng = random.Random(0)
    policy = reply_policy(protocol)  # type: ignore[arg-type]
    assert run_steps(policy, [behaviour(loop, protocol, n, rng) for n in range(100)]) == stop_at


def test_every_step_kind_has_a_rule_with_a_reason() -> None:
    """The rules are data: each kind says whether it is progress and whether it is a result, and why."""
    progress = {k for k, r in STEP_RULES.items() if r.progress}
    results = {k for k, r in STEP_RULES.items() if r.result}
    assert progress == {"new success", "rejected", "new failure"}
    assert results == {"new success", "rejected"}
    assert {k for k, r in STEP_RULES.items() if r.bounded} == {"new failure"}
    assert all(r.why for r in STEP_RULES.values())
