"""#40 (model-fault attacker, round 6): a step that worked is progress only when it did something new —
its shape (code with its own names, strings and numbers abstracted; a call with numbers stripped) or
its result (the output normalised as errors are) is new in the turn. The tester's trivially new steps
(``print('step N')``, ``v_N = 1``, ``open('f_N.txt')``, "Subtask number N", each alternating with broken
calls) ran every protocol to the request budget; generated loops of those kinds now end on the
progress bound, and generated legit work (other files read, other outputs) is never cut short."""

from __future__ import annotations

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

from freeact_tui.agent.policy.errors import output_shape
from freeact_tui.agent.policy.progress import DEFAULT_STALL_LIMIT, StopTurn, code_shape, near
from freeact_tui.agent.policy.reply import reply_policy
from freeact_tui.store.meta_keys import NUDGE_KEY
from freeact_tui.toolcalls import CODE_TOOL
from tests.fast.agent.test_progress_notion import PROTOCOLS, code_step, run_steps, subagent_step

NAMES = st.from_regex(r"[a-z][a-z_]{0,7}", fullmatch=True)
TEXTS = st.text(alphabet="abcdefghij klmnopXYZ,.:äöé", min_size=1, max_size=20).filter(str.strip)


def broken_step(protocol: str, n: int) -> list[ModelMessage]:
    """A step in which nothing ran: broken JSON arguments (a tool protocol) or a reply with no block
    that got a nudge (``text``)."""
    if protocol == "text":
        return [
            ModelResponse(parts=[TextPart("Let me think about it.")]),
            ModelRequest(parts=[UserPromptPart("Write the code.")], metadata={NUDGE_KEY: "no block"}),
        ]
    call = ToolCallPart(CODE_TOOL, '{"code": "pri' + "x" * n, tool_call_id=f"b{n}")
    ret = ToolReturnPart(
        CODE_TOOL,
        "Invalid JSON arguments.",
        tool_call_id=f"b{n}",
        metadata={"outcome": "error", "malformed": True},
    )
    return [ModelResponse(parts=[call]), ModelRequest(parts=[ret])]


@st.composite
def trivial_loop(draw: st.DrawFn, protocol: str) -> list[list[ModelMessage]]:
    """60 steps of one of the tester's kinds: each step new only in a number (in a string, a name, a
    file name, a literal, a subagent's task), perhaps alternating with broken calls."""
    kinds = ["string", "name", "file", "number", "fstring"] + ([] if protocol == "text" else ["subagent"])
    kind = draw(st.sampled_from(kinds))
    text, name = draw(TEXTS), draw(NAMES)
    broken_every = draw(st.sampled_from([0, 2, 3]))
    start = draw(st.integers(0, 1000))
    steps: list[list[ModelMessage]] = []
    for k in range(60):
        n = start + k
        if broken_every and k % broken_every:
            steps.append(broken_step(protocol, n))
            continue
        match kind:
            case "string":
                steps.append(code_step(protocol, f"print({f'{text} {n}'!r})", f"{text} {n}", "ok", n))
            case "fstring":
                steps.append(code_step(protocol, f"i = {n}\nprint(f'{text} {{i}}')", f"{text} {n}", "ok", n))
            case "name":
                steps.append(code_step(protocol, f"{name}_{n} = 1", "", "ok", n))
            case "file":
                code = f"open('{name}_{n}.txt', 'w').write('x')"
                steps.append(code_step(protocol, code, "1", "ok", n))
            case "number":
                steps.append(code_step(protocol, f"{name} = {n} * 2\nprint({name})", str(2 * n), "ok", n))
            case "subagent":
                steps.append(
                    subagent_step(f"Subtask number {n}: {text}", f"{text} finished, nothing found.", n)
                )
    return steps


@settings(max_examples=200, deadline=None)
@given(data=st.data(), protocol=st.sampled_from(PROTOCOLS))
def test_trivially_new_steps_end_on_the_progress_bound(data: st.DataObject, protocol: str) -> None:
    """The first step is new; after it, no step of the loop is, whatever number it carries: the turn
    stops within the stall bound of steps (broken calls in between count against it too)."""
    steps = data.draw(trivial_loop(protocol))
    policy = reply_policy(protocol)  # type: ignore[arg-type]
    stopped = run_steps(policy, steps)
    assert stopped is not None
    assert stopped <= 1 + 3 * DEFAULT_STALL_LIMIT


CONTENTS = st.lists(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz ,.\n", min_size=3, max_size=60).filter(
        lambda t: any(c.isalpha() for c in t)
    ),
    min_size=10,
    max_size=10,
    unique_by=lambda t: " ".join(t.split()),
).filter(  # genuinely different: no file's text is another's with one word or one line changed
    lambda cs: not any(near(output_shape(a), {output_shape(b)}) for i, a in enumerate(cs) for b in cs[:i])
)


@settings(max_examples=60, deadline=None)
@given(protocol=st.sampled_from(PROTOCOLS), contents=CONTENTS, name=NAMES)
def test_reading_ten_different_files_with_the_same_code_is_never_stopped(
    protocol: str, contents: list[str], name: str
) -> None:
    """Ten files read one per step with code of one shape: each output is new, each step is progress."""
    policy = reply_policy(protocol)  # type: ignore[arg-type]
    steps = [
        code_step(protocol, f"print(open('{name}_{i}.txt').read())", content, "ok", i)
        for i, content in enumerate(contents)
    ]
    assert run_steps(policy, steps) is None


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    "make",
    [
        lambda p, n: code_step(p, f"print('working on it, step {n}')", f"working on it, step {n}", "ok", n),
        lambda p, n: code_step(p, f"v_{n} = 1", "", "ok", n),
        lambda p, n: code_step(p, f"open('f_{n}.txt','w').write('x')", "1", "ok", n),
    ],
    ids=["str_success", "var_success", "file_success"],
)
def test_the_testers_runs_stop_after_the_first_step_and_the_bound(protocol: str, make: object) -> None:
    """The tester's str_success, var_success and file_success went to 100 requests; now 1 + the bound."""
    policy = reply_policy(protocol)  # type: ignore[arg-type]
    assert run_steps(policy, [make(protocol, n) for n in range(100)]) == 1 + DEFAULT_STALL_LIMIT  # type: ignore[operator]


@pytest.mark.parametrize("protocol", ["tools", "auto"])
def test_alternating_broken_calls_and_one_new_print_stop(protocol: str) -> None:
    """alt_broken: two broken calls then ``print('ok N')``, repeated (100 requests before)."""
    steps = [
        code_step(protocol, f"print('ok {n}')", f"ok {n}", "ok", n)
        if n % 3 == 2
        else broken_step(protocol, n)
        for n in range(100)
    ]
    stopped = run_steps(reply_policy(protocol), steps)  # type: ignore[arg-type]
    assert stopped is not None and stopped <= 6


def test_subagent_tasks_that_differ_in_a_number_with_one_answer_stop_and_say_task() -> None:
    """subagent_loop2: "Subtask number N: look around", answered the same way each time."""
    policy = reply_policy("auto")
    stop = None
    for n in range(50):
        stop = policy.after_step(
            subagent_step(f"Subtask number {n}: look around", "Subtask finished, nothing found.", n)
        )
        if isinstance(stop, StopTurn):
            break
    assert isinstance(stop, StopTurn) and n == DEFAULT_STALL_LIMIT
    assert "subagent task" in stop.message and "code" not in stop.message


def test_shape_abstracts_own_names_strings_and_numbers_but_not_what_is_called() -> None:
    assert code_shape("v_1 = 1") == code_shape("total = 99")
    assert code_shape("print('a')") == code_shape("print('something else')")
    assert code_shape("def f(x):\n    return x") == code_shape("def g(y):\n    return y")
    assert code_shape("print(x)") != code_shape("len(x)")
    assert code_shape("import os\nprint(os.getcwd())") != code_shape("import os\nprint(os.listdir())")
    assert code_shape("!cat f_1.txt") == code_shape("!cat f_2.txt")


SPELLED = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]


@st.composite
def varied_loop(draw: st.DrawFn, protocol: str) -> list[list[ModelMessage]]:
    """The fifth attack's loops (round 8): each step new only in an attribute or keyword name it sets, a
    number word in its output, one more statement or term, or one word of a subagent's task — a model
    that does nothing new."""
    kinds = ["attribute", "keyword", "spelled", "grow prints", "grow expression"]
    kind = draw(st.sampled_from(kinds + ([] if protocol == "text" else ["subagent word"])))
    name, text = draw(NAMES), draw(TEXTS)
    steps: list[list[ModelMessage]] = []
    for n in range(40):
        match kind:
            case "attribute":
                code = f"import types\nns = types.SimpleNamespace()\nns.{name}_{n} = 1"
                steps.append(code_step(protocol, code, "", "ok", n))
            case "keyword":
                steps.append(code_step(protocol, f"d = dict({name}_{n}=1)", "", "ok", n))
            case "spelled":
                said = f"{text} step {SPELLED[n % len(SPELLED)]}"
                steps.append(code_step(protocol, f"print({said!r})", said, "ok", n))
            case "grow prints":
                code = "\n".join(f"print({i})" for i in range(n + 1))
                steps.append(code_step(protocol, code, "\n".join(str(i) for i in range(n + 1)), "ok", n))
            case "grow expression":
                steps.append(code_step(protocol, "x = " + "+".join(["1"] * (n + 1)), "", "ok", n))
            case "subagent word":
                word = "wa" + "abcdefghijklmnopqrstuvwxyz"[n % 26] + "x"
                steps.append(subagent_step(f"Check the {word} module", f"Done checking {word}.", n))
    return steps


@settings(max_examples=150, deadline=None)
@given(data=st.data(), protocol=st.sampled_from(PROTOCOLS))
def test_steps_new_only_in_a_word_a_set_name_or_their_length_end_on_the_bound(
    data: st.DataObject, protocol: str
) -> None:
    """Each of these ran every protocol to the 100-request budget (attack round 8): a name the code sets
    (an attribute, a keyword), a word of its output or task, one more statement or term is no progress;
    the turn stops within a few steps of the stall bound."""
    steps = data.draw(varied_loop(protocol))
    stopped = run_steps(reply_policy(protocol), steps)  # type: ignore[arg-type]
    assert stopped is not None and stopped <= 2 + DEFAULT_STALL_LIMIT


def test_near_is_one_word_or_one_line_of_most_of_a_text() -> None:
    assert near("working on it, step one", {"working on it, step two"})
    assert near(output_shape("0\n1\n2"), {output_shape("0\n1")})
    assert not near("aab", {"aac"}) and not near("aa.", {"aa,"})  # one word is all of a short text
    assert not near("the cat sat on the mat", {"a dog ran in the park"})
    assert code_shape("import os\nprint(os.getcwd())") != code_shape("import os\nprint(os.listdir())")
    assert code_shape("x = 1+1+1") == code_shape("x = 1+1") != code_shape("x = 1")
