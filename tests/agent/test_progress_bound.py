"""#40: every model fault costs a few requests, in every protocol — generated, against a real kernel.

A scripted model (``FunctionModel``) plays a generated prefix of faults and then repeats one fault
forever: broken JSON arguments, an unknown tool, code that fails the same way, two failures in
turn, an empty reply, a text-mode call that cannot be parsed, a block that fails, a call the user
refuses. In ``tools``, ``text`` and ``auto`` the turn must end on its own bound (never the request
budget) within a few requests after the prefix, and no corrective message the model is sent may
contain an earlier one (the nesting of "This is the code that just failed (This is the code …").
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart

from freeact_tui.agent.agent import Agent
from freeact_tui.agent.policy.progress import DEFAULT_FAILING_LIMIT, DEFAULT_STALL_LIMIT, KIND_REPEATS
from freeact_tui.events import AgentError, ApprovalRequest
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.store.step_record import StepRecord
from freeact_tui.store.transcript import NUDGE_KEY, SWITCH_KEY, content_text
from tests.helpers import of, run
from tests.scripted import CODE_TOOL, Call, Code, Item, Script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]

FAULTS = [
    "broken_json",
    "unknown_tool",
    "fail_same",
    "fail_alternating",
    "empty",
    "text_call",
    "block_fail",
    "refused",
    "fail_numbered",
    "works_commented",
    "whitespace",
    "think_only",
    "fail_words",
    "name_words",
    "clock",
    "counter",
    "invented_class",
    "rotating_kinds",
]
NOVELTY_LOOPS = ["clock", "counter", "invented_class", "rotating_kinds"]
"""The hostile tester's loops (#40): the result is new each time because the model makes it so."""
ROTATING = ["ValueError", "KeyError", "TypeError", "IndexError", "RuntimeError", "AttributeError", "OSError"]
KIND_LOOPS = {"fail_words", "name_words"}
"""A new message each time, one kind of error: new failures until the kind has failed KIND_REPEATS times."""
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
PREFIX_ONLY = ["fail_varied", "works"]  # progress by definition: they may come before the loop, not be it


def fault_step(fault: str, i: int) -> list[Item]:
    """The reply of step ``i`` that makes ``fault``."""
    made = made_up if fault in KIND_LOOPS else model_made_novelty if fault in NOVELTY_LOOPS else None
    if made is not None:
        return made(fault, i)
    match fault:
        case "broken_json":
            return [Call(CODE_TOOL, '{"code": "pri', call_id=f"b{i}")]
        case "unknown_tool":
            return [Call("no_such_tool", {"x": 1}, call_id=f"u{i}")]
        case "fail_same":
            return [Code("1 / 0", call_id=f"f{i}")]
        case "fail_alternating":
            return [Code("1 / 0" if i % 2 else "import no_such_module_40", call_id=f"a{i}")]
        case "fail_varied":
            return [Code(f"raise ValueError('varied {WORDS[i % len(WORDS)]}')", call_id=f"v{i}")]
        case "fail_numbered":  # the same failure, a new number each time: a counter, a name, a time
            return [
                Code(
                    f"import time; undefined_{i} if {i} % 2 else None; raise ValueError(f'attempt {i} {{time.time()}}')",
                    call_id=f"n{i}",
                )
            ]
        case "works_commented" | "works":
            return succeeding(fault, i)
        case "whitespace":
            return [" \n\t " * (i % 3 + 1)]
        case "think_only":
            return [f"<think>I should run some code now, step {i}.</think>"]
        case "empty":
            return [""]
        case "text_call":
            return ['<tool_call>{"name": "ipybox_execute_ipython_cell", "arguments": {"code": "pri']
        case "block_fail":
            return ["```python\n1 / 0\n```"]
        case "refused":
            return [Code("print('REFUSE ME')", call_id=f"r{i}")]
    raise AssertionError(fault)


def succeeding(fault: str, i: int) -> list[Item]:
    """Code that works: the same success with a new comment each time, or a new output each time."""
    if fault == "works_commented":
        return [Code(f"print('working on it')  # {i}", call_id=f"c{i}")]
    return [Code(f"print({i})", call_id=f"w{i}")]


def model_made_novelty(fault: str, i: int) -> list[Item]:
    """A step whose result is new each time because the model makes it so (the tester's loops)."""
    match fault:
        case "clock":  # the same code, a new output each time
            return [Code("import time; print(time.time())", call_id=f"t{i}")]
        case "counter":
            return [Code("n = globals().get('n', 0) + 1; print(n)", call_id=f"k{i}")]
        case "invented_class":  # a new exception class each time
            name = "E" + "".join(chr(97 + (i * 7 + k * 5) % 26) for k in range(6))
            return [Code(f"class {name}(Exception): pass\nraise {name}('boom')", call_id=f"x{i}")]
        case "rotating_kinds":
            return [Code(f"raise {ROTATING[i % len(ROTATING)]}('boom')", call_id=f"rk{i}")]
    raise AssertionError(fault)


def made_up(fault: str, i: int) -> list[Item]:
    """A failure whose message is made up anew each step, with no number in it."""
    if fault == "fail_words":  # a random word
        word = "".join(chr(97 + (i * 7 + k * 3) % 26) for k in range(8))
        return [Code(f"raise ValueError('{word}')", call_id=f"fw{i}")]
    word = "".join(chr(97 + (i * 5 + k * 11) % 26) for k in range(6))  # a name the model invents
    return [Code(f"{word}_value + 1", call_id=f"nw{i}")]


class Looping(Script):
    """Plays the prefix, then the loop fault for ever (numbered on, so calls keep distinct ids)."""

    def __init__(self, prefix: list[str], loop: str) -> None:
        super().__init__([fault_step(f, i) for i, f in enumerate(prefix)])
        self.prefix = prefix
        self.loop = loop

    async def _stream(self, messages, info):  # type: ignore[no-untyped-def,override]
        index = len(self.requests)
        while len(self.steps) <= index:
            self.steps.append(fault_step(self.loop, len(self.steps)))
        async for chunk in super()._stream(messages, info):
            yield chunk


def correctives(messages: list[ModelMessage]) -> list[str]:
    """What the app told the model of its faults: broken and refused calls' returns, nudges, the switch."""
    found: list[str] = []
    for m in messages:
        if not isinstance(m, ModelRequest):
            continue
        meta = m.metadata if isinstance(m.metadata, dict) else {}
        if NUDGE_KEY in meta or SWITCH_KEY in meta:
            found.extend(str(p.content) for p in m.parts if isinstance(p, UserPromptPart))
        for p in m.parts:
            if isinstance(p, ToolReturnPart) and (StepRecord.of_part(p).malformed or StepRecord.of_part(p).guarded):
                found.append(content_text(p.content))
    return found


def refuse(request: ApprovalRequest) -> bool:
    return "REFUSE ME" not in str(request.tool_args)


@settings(
    max_examples=24,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    protocol=st.sampled_from(["tools", "text", "auto"]),
    prefix=st.lists(st.sampled_from(FAULTS + PREFIX_ONLY), max_size=6),
    loop=st.sampled_from(FAULTS),
)
async def test_a_fault_loop_ends_on_the_progress_bound_and_corrections_never_nest(
    executor: KernelExecutor,
    tmp_path_factory: pytest.TempPathFactory,
    protocol: str,
    prefix: list[str],
    loop: str,
) -> None:
    tmp_path: Path = tmp_path_factory.mktemp("bound")
    s = Looping(prefix, loop)
    bound = len(prefix) + 2 + DEFAULT_STALL_LIMIT  # a loop of two failures makes progress twice at most
    if loop in KIND_LOOPS:
        bound += KIND_REPEATS
    agent = Agent(
        s.model(),
        sessions_dir=tmp_path / "sessions",
        working_dir=tmp_path,
        executor=executor,
        permissions=PermissionRules(None, defaults=False),
        action_protocol=protocol,
        max_model_requests=bound + 10,
    )
    async with agent:
        events = await run(agent, "go", decide=refuse)
    errors = of(events, AgentError)
    assert [e.kind for e in errors if e.kind == "limit"] == [], (protocol, prefix, loop, errors)
    assert len(s.requests) <= bound, (protocol, prefix, loop, len(s.requests))
    told = correctives(s.requests[-1]) if s.requests else []
    for k, earlier in enumerate(told):
        for later in told[k + 1 :]:
            assert later == earlier or earlier not in later, (protocol, prefix, loop, later)


@pytest.mark.parametrize("protocol", ["tools", "text", "auto"])
@pytest.mark.parametrize("loop", sorted(KIND_LOOPS))
async def test_failures_with_a_new_message_each_time_end_on_the_bound(
    executor: KernelExecutor, tmp_path: Path, protocol: str, loop: str
) -> None:
    """A tester's model raised ``ValueError('<8 random letters>')`` (or used a new invented name) on
    every step: each error was new to the turn, so the turn ran to the request budget (#40)."""
    s = Looping([], loop)
    agent = Agent(
        s.model(),
        sessions_dir=tmp_path / "sessions",
        working_dir=tmp_path,
        executor=executor,
        permissions=PermissionRules(None, defaults=False),
        action_protocol=protocol,
        max_model_requests=40,
    )
    async with agent:
        events = await run(agent, "go")
    assert len(s.requests) <= KIND_REPEATS + DEFAULT_STALL_LIMIT + 1, (protocol, loop, len(s.requests))
    assert [e.kind for e in of(events, AgentError)] == ["stalled"]


@pytest.mark.parametrize("protocol", ["tools", "text", "auto"])
@pytest.mark.parametrize("loop", NOVELTY_LOOPS)
async def test_novelty_the_model_makes_is_not_progress(
    executor: KernelExecutor, tmp_path: Path, protocol: str, loop: str
) -> None:
    """The tester's model repeated ``print(time.time())`` (or a counter), raised an exception class it
    invented each time, or rotated kinds of error: 100 requests (33 rotating) in every protocol (#40)."""
    s = Looping([], loop)
    agent = Agent(
        s.model(),
        sessions_dir=tmp_path / "sessions",
        working_dir=tmp_path,
        executor=executor,
        permissions=PermissionRules(None, defaults=False),
        action_protocol=protocol,
        max_model_requests=40,
    )
    async with agent:
        events = await run(agent, "go")
    assert len(s.requests) <= 1 + max(DEFAULT_STALL_LIMIT, DEFAULT_FAILING_LIMIT), (
        protocol,
        loop,
        len(s.requests),
    )
    assert [e.kind for e in of(events, AgentError)] == ["stalled"]
