"""Progress of a turn: one notion, one bound, the same in every protocol (#40).

Progress is evidence that the TURN moves toward an answer, not that a result is new: the model
controls what its code prints and what its errors say (a clock, a counter, a random word, an
invented exception class), so novelty of a result alone never counts. Each step (one model reply and
what it led to) is read into one ``StepKind``; ``STEP_RULES`` says, as data, what each kind is:

- ``new success``: an action that had not run in this turn worked, and it did something new: its
  printed result was not printed ``RESULT_REPEATS`` times already (by code of any shape), and its
  SHAPE is new in the turn (``action_shape``: the code's syntax tree with its own names, strings and
  numbers abstracted; another tool's call with numbers, paths and ids stripped) OR its RESULT is new
  in the turn (``output_shape``: its output normalised as errors are), and fewer than ``shape_limit``
  steps of its shape worked before (``DEFAULT_SHAPE_LIMIT``: a loop of one shape is bounded, whatever
  it prints). ``print('step 3')`` after
  ``print('step 2')``, ``v_4 = 1`` after ``v_3 = 1``, ``open('f_5.txt','w')`` after ``f_4``, the
  subagent task "Subtask 7" after "Subtask 6" with the same answer: one step again. Reading another
  file with the same code shape is new (its output is).
- ``rejected``: the user rejected or stopped an action (the turn ends; the user said what to do).
- ``new failure``: an action failed with an error new to the turn (``error_shape``: paths, numbers,
  ids and the names of exception classes the code defined itself stripped) whose kind
  (``error_kind``) has not failed ``KIND_REPEATS`` times. It is progress, bounded: at most
  ``failing_limit`` of them (``max_failing_steps``) with no action that worked since, whatever the kinds.
- ``repeated success``: code (or a call) that already ran in this turn, run again (whatever it
  printed), or one of a shape that ran with a result already seen: the step is not new. It counts
  against the bound like any step without progress.
- ``repeated failure``, ``refused call``, ``broken call``, ``no answer``: no progress.

A step with several actions takes the first kind of ``STEP_RULES`` that one of them has. After
``limit`` steps in a row without progress, or ``failing_limit`` steps since a new failure with no action
that worked since (new failures, and the repeated ones and broken calls between them), the turn stops with one ``StopTurn`` that says what kept failing and what the user can do.

The request budget (``max_model_requests``) stays the outer limit; it never ends a fault loop.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart

from freeact_tui.agent.policy.errors import error_kind, error_line, error_shape, output_shape
from freeact_tui.agent.policy.nudge import nudge_reason
from freeact_tui.agent.policy.outcomes import Outcome, outcomes
from freeact_tui.store.step_record import StepRecord
from freeact_tui.store.transcript import content_text
from freeact_tui.toolcalls import SUBAGENT_TOOL

DEFAULT_STALL_LIMIT = 3
"""Steps in a row without progress before a turn stops (``max_steps_without_progress``)."""

DEFAULT_FAILING_LIMIT = 5
"""New failures with no action that worked since before a turn stops (``max_failing_steps``): new
failures are progress, but not for ever (a new exception class, a rotating kind, each time)."""

RESULT_REPEATS = 2
"""Actions that worked and printed one result (exactly, spacing aside) a turn may have, whatever their
code's shape: one more way to the same printed result checks it; after that, a new shape with the same
result is no new step (#40: ``print(abs(1))``, ``print(str(1))``, ``print(int(1))`` … ran 18 requests).
A step that printed nothing (a file written) is judged by its shape: its result is not in its output."""

DEFAULT_SHAPE_LIMIT = 8
"""Steps of one shape (``action_shape``, repeats folded) a turn may count as progress
(``max_steps_of_one_shape``), whatever they print (F2: a loop of ONE shape whose results vary —
``print('checking alpha then delta now')`` two other words each step, ``random.sample`` — ran 30–100
requests). Past it such a step is no progress, and the stop says the same code ran that often: put the
work in one cell (a loop over files), or answer. Ten files read one per step still pass the bound
(8 + ``max_steps_without_progress`` steps)."""

KIND_REPEATS = 3
"""Failures of one kind (``error_kind``) a turn may meet, each with a new message, before another of
that kind no longer counts as progress."""

StepKind = Literal[
    "new success",
    "rejected",
    "new failure",
    "repeated success",
    "repeated failure",
    "refused call",
    "broken call",
    "no answer",
]
FaultKind = StepKind
"""The kind of a step that made no (or only bounded) progress."""


@dataclass(frozen=True)
class StepRule:
    """What one kind of step is to the bound."""

    progress: bool
    """It ends a run of steps without progress (``max_steps_without_progress``)."""
    result: bool
    """It ends a run of failing steps (``max_failing_steps``): an action worked, or the user decided."""
    bounded: bool
    """It is progress only while fewer than ``max_failing_steps`` such steps came without a result."""
    why: str


STEP_RULES: dict[StepKind, StepRule] = {
    "new success": StepRule(True, True, False, "an action that had not run in this turn worked"),
    "rejected": StepRule(
        True, True, False, "the user rejected or stopped an action and decides how to go on"
    ),
    "new failure": StepRule(
        True,
        False,
        True,
        "an error new to the turn: the model learnt something, but a run of failures is bounded",
    ),
    "repeated success": StepRule(
        False,
        False,
        False,
        "code that already ran in this turn ran again: what it printed does not make it new",
    ),
    "repeated failure": StepRule(
        False, False, False, "an error met before in this turn (or one kind too often)"
    ),
    "refused call": StepRule(False, False, False, "the call was not run (the repeat guard, a rule)"),
    "broken call": StepRule(False, False, False, "bad JSON arguments or an unknown tool: nothing ran"),
    "no answer": StepRule(False, False, False, "the reply neither acted nor answered"),
}
"""Step kinds in order of precedence (a step with several actions is the first kind one of them has)
and what each is to the bound."""


@dataclass(frozen=True)
class Fault:
    """What a step was (its ``StepKind``) and what the user reads of it (one line)."""

    kind: StepKind
    detail: str


@dataclass(frozen=True)
class StopTurn:
    """End the turn: ``steps`` steps in a row made no progress; ``message`` says what failed and what to do."""

    message: str
    steps: int


@dataclass(frozen=True)
class SwitchProtocol:
    """``auto``: act in code blocks from now on (the model cannot call tools); ``reason`` says why."""

    reason: str


StepVerdict = StopTurn | SwitchProtocol | None

# -- one step ------------------------------------------------------------------------------------


@dataclass
class TurnProgress:
    """What a turn has met so far: its failures (normalised), their kinds, the actions that worked."""

    failures: set[str] = field(default_factory=set)
    """The errors met, by ``error_shape``."""
    kinds: dict[str, int] = field(default_factory=dict)
    """How many failing steps met each kind of error (``error_kind``)."""
    successes: set[str] = field(default_factory=set)
    """The actions that worked, by ``action_identity`` (never by their output)."""
    shapes: set[str] = field(default_factory=set)
    """The actions that worked, by ``action_shape``."""
    results: set[str] = field(default_factory=set)
    """The outputs of the actions that worked, by ``output_shape``."""
    printed: dict[str, int] = field(default_factory=dict)
    """How many actions that worked printed each (non-empty) output, exactly (``_printed``)."""
    shape_limit: int = DEFAULT_SHAPE_LIMIT
    """Steps of one shape that count as progress (``max_steps_of_one_shape``)."""
    shape_runs: dict[str, int] = field(default_factory=dict)
    """How many actions of each shape worked (``action_shape``)."""

    def judge(self, step: Sequence[ModelMessage]) -> Fault:
        """What ``step`` was (the messages of one step: the reply first, then what it led to); then
        remember what it met."""
        fault = self._kind(step)
        met: set[str] = set()
        for o in outcomes(step):
            if o.failed and not o.guarded:
                self.failures.add(error_shape(o.output))
                met.add(error_kind(o.output))
            elif o.ran and not o.failed:
                self.successes.add(action_identity(o))
                self.shapes.add(action_shape(o))
                self.shape_runs[action_shape(o)] = self.shape_runs.get(action_shape(o), 0) + 1
                self.results.add(output_shape(o.output))
                if printed := _printed(o.output):
                    self.printed[printed] = self.printed.get(printed, 0) + 1
        for kind in met:
            self.kinds[kind] = self.kinds.get(kind, 0) + 1
        return fault

    def _kind(self, step: Sequence[ModelMessage]) -> Fault:
        found = [self._action(o) for o in outcomes(step)]
        found.extend(Fault("broken call", error_line(text)) for text in broken_calls(step))
        for message in step:
            reason = nudge_reason(message)
            if reason is not None:
                found.append(Fault("no answer", reason))
        if not found:
            return Fault("no answer", "the reply neither acted nor answered")
        order = list(STEP_RULES)
        return min(found, key=lambda f: order.index(f.kind))

    def _action(self, o: Outcome) -> Fault:
        if o.guarded:
            return Fault("refused call", error_line(o.output))
        if o.failed:
            error = error_shape(o.output)
            if error not in self.failures and self.kinds.get(error_kind(o.output), 0) < KIND_REPEATS:
                return Fault("new failure", error_line(o.output))
            return Fault("repeated failure", error_line(o.output))
        if o.ran:
            what = "subagent task" if o.call is not None and o.call.startswith(SUBAGENT_TOOL) else "code"
            if action_identity(o) in self.successes:
                return Fault("repeated success", f"the same {what} as an earlier step of this turn, again")
            if near(action_shape(o), self.shapes) and near(output_shape(o.output), self.results):
                return Fault(
                    "repeated success",
                    f"{what} of the same shape as an earlier step of this turn, with a result seen before",
                )
            if (printed := _printed(o.output)) and self.printed.get(printed, 0) >= RESULT_REPEATS:
                return Fault("repeated success", f"{what} of another shape, with the same result as before")
            if (runs := self.shape_runs.get(action_shape(o), 0)) >= self.shape_limit:
                return Fault(
                    "repeated success",
                    f"{what} of one shape ran {runs} times in this turn: put the work in one cell, or answer",
                )
            return Fault("new success", "")
        return Fault("rejected", o.output)  # rejected or interrupted: the user decides how to go on




def _printed(output: str) -> str:
    """An output as a result compared exactly (its spacing collapsed): ``1`` and ``2`` are two results,
    unlike in ``output_shape``, which strips numbers to tell steps new only in a counter."""
    return " ".join(output.split())


class _Numbers(ast.NodeTransformer):
    """Number literals as one placeholder: a counter or a time written into the code is the same step."""

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, (int, float, complex)) and not isinstance(node.value, bool):
            return ast.copy_location(ast.Constant(0), node)
        return node


def code_identity(code: str | None) -> str | None:
    """What identifies a step's code across attempts: its syntax tree, without comments, layout or
    the values of number literals (``print(1)`` and ``print(2)`` are one step; strings stay: reading
    another file is another step).

    Code that does not parse as Python (shell lines, cell magics) by its text with spacing collapsed.
    """
    if code is None:
        return None
    try:
        return ast.dump(_Numbers().visit(ast.parse(code)))
    except (SyntaxError, ValueError):
        return " ".join(code.split())


class _Shape(_Numbers):
    """The code's own names (not Python's builtins) and its string literals as placeholders too."""

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, (str, bytes)):
            return ast.copy_location(ast.Constant(""), node)
        return super().visit_Constant(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in _BUILTINS:
            return node
        return ast.copy_location(ast.Name("_", node.ctx), node)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = "_"
        return self.generic_visit(node)

    def _named(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> ast.AST:
        node.name = "_"
        return self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _named

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        """An attribute the code SETS is its own name (``ns.v_7 = 1``); one it reads names the library's
        (``os.listdir`` is not ``os.getcwd``)."""
        if isinstance(node.ctx, ast.Store | ast.Del):
            node.attr = "_"
        return self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> ast.AST:
        """A keyword argument's name is the code's own word when it names a new key (``dict(k_7=1)``)."""
        if node.arg is not None:
            node.arg = "_"
        return self.generic_visit(node)

    def generic_visit(self, node: ast.AST) -> ast.AST:
        """Shapes that differ only in how many times a part repeats are one shape (F1): a run of
        same-shaped items of any list (statements, list/tuple/set/dict elements, call arguments, …) is
        one item, and a node nested in one of its own kind that differs from it only there (``abs(abs(x))``,
        ``if True:`` in ``if True:``, ``1+1+…+1``) is that one."""
        super().generic_visit(node)
        for name, value in ast.iter_fields(node):
            if isinstance(value, list) and len(value) > 1 and all(isinstance(v, ast.AST) for v in value):
                setattr(node, name, _one_per_run(value))
        return _unnested(node)


def _one_per_run(items: list[ast.AST]) -> list[ast.AST]:
    """Items with a run of same-shaped ones as one: code one ``print(_)`` or one ``0,`` longer each step
    is the same step."""
    kept: list[ast.AST] = []
    for item in items:
        if not kept or ast.dump(item) != ast.dump(kept[-1]):
            kept.append(item)
    return kept


_HOLE = ast.Constant("\x00")


def _unnested(node: ast.AST) -> ast.AST:
    """``node``'s child of its own kind (in a field, or alone in a list) when the two differ only there:
    one level of nesting more is the same shape."""
    for name, value in ast.iter_fields(node):
        if isinstance(value, list) and len(value) == 1 and type(value[0]) is type(node):
            child = value[0]
        elif type(value) is type(node):
            child = value
        else:
            continue
        if _with_hole(node, name) == _with_hole(child, name):
            return child
    return node


def _with_hole(node: ast.AST, name: str) -> str | None:
    """``node`` dumped with its field ``name`` (a node, or a list of one) as a hole."""
    value = getattr(node, name, None)
    if isinstance(value, list):
        if len(value) != 1:
            return None
        setattr(node, name, [_HOLE])
    elif isinstance(value, ast.AST):
        setattr(node, name, _HOLE)
    else:
        return None
    try:
        return ast.dump(node)
    finally:
        setattr(node, name, value)


_BUILTINS = frozenset(dir(builtins))
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")


def code_shape(code: str) -> str:
    """What a step's code does, whatever it names: ``code_identity`` with the code's own names (a
    variable, a function; not Python's builtins nor attributes: ``os.listdir`` is not ``os.getcwd``) and
    string literals abstracted too. Code that does not parse (shell lines, cell magics) by its text
    with quoted strings, numbers and paths stripped."""
    try:
        return ast.dump(_Shape().visit(ast.parse(code)))
    except (SyntaxError, ValueError, RecursionError):
        return output_shape(_QUOTED.sub("''", code))


def action_shape(o: Outcome) -> str:
    """What kind of step an action was, whatever it named: its code's ``code_shape``, else the tool and
    its arguments normalised (``output_shape``: a subagent task with numbers, paths and ids stripped)."""
    if o.code is not None:
        return f"code {code_shape(o.code)}"
    if o.call is not None:
        return f"call {output_shape(o.call)}"
    return f"output {output_shape(o.output)}"


def action_identity(o: Outcome) -> str:
    """What identifies an action across attempts: its code (``code_identity``), else the tool and
    its arguments (``subagent_task`` by its task), else (neither is known) its output."""
    if o.code is not None:
        return f"code {code_identity(o.code)}"
    if o.call is not None:
        return f"call {o.call}"
    return f"output {o.output}"


_WORD = re.compile(r"<\w+>|\w+|[^\w\s]")  # a placeholder of ``output_shape`` (``<n>``) is one word
NEAR_LIMIT = 20_000
"""Characters of the texts compared past which only an exact match is near (the check stays cheap)."""


def near(text: str, seen: set[str]) -> bool:
    """``text`` is one of ``seen`` or within one word or one line of one (put in, left out or changed):
    "step one" after "step two", one more output line, "Check the waax module" after "…wacx…". The
    model controls the words its code prints and its tasks say; a word or a line alone is no new result."""
    if text in seen:
        return True
    if len(text) > NEAR_LIMIT:
        return False
    words, lines = _WORD.findall(text), text.splitlines()
    return any(
        _one_apart(words, _WORD.findall(other)) or _one_apart(lines, other.splitlines())
        for other in seen
        if abs(len(other) - len(text)) <= 256
    )


def _one_apart(a: list[str], b: list[str]) -> bool:
    """The lists (of words, or of lines) differ by one insertion, deletion or substitution, and what they
    share is most of them (at least two items and half the longer): for a text of a word or two, one
    word is all of it."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    shared = len(a) - (len(a) == len(b))
    if shared < max(2, (len(b) + 1) // 2):
        return False
    start = 0
    while start < len(a) and a[start] == b[start]:
        start += 1
    if len(a) == len(b):
        return a[start + 1 :] == b[start + 1 :]
    return a[start:] == b[start + 1 :]


def broken_calls(step: Sequence[ModelMessage]) -> list[str]:
    """What the model was told for each broken call of ``step`` (bad arguments, an unknown tool)."""
    return [
        content_text(p.content)
        for m in step
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart) and StepRecord.of_part(p).malformed
    ]


def only_broken_calls(step: Sequence[ModelMessage]) -> bool:
    """Every call of the step was broken (and there was one)."""
    return bool(broken_calls(step)) and next(outcomes(step), None) is None


# -- the bound -----------------------------------------------------------------------------------

_HINTS: dict[StepKind, str] = {
    "broken call": "use a model that is better at tool calls, or let it write code blocks (--action-protocol text)",
    "refused call": "allow the action (a rule, or --allow when headless) or tell the model to do it another way",
    "repeated failure": "fix the cause, or tell the model what to do differently",
    "new failure": "fix the cause, or tell the model what to do differently",
    "repeated success": "tell the model what is still missing, or ask for the answer",
    "no answer": "rephrase the request, or try another model",
}
"""What the user can do, by the kind of step (in the order the steps came)."""

_WHAT: dict[StepKind, str] = {
    "broken call": "broken tool call",
    "refused call": "refused call",
    "repeated failure": "the same failure again",
    "new failure": "failure",
    "repeated success": "nothing new",
    "no answer": "no answer",
}


def stop_message(
    faults: Sequence[Fault], limit: int, configured: int | None = None, *, failing: bool = False
) -> str:
    """The one message of a turn that stopped: what kept failing, what the user can do.

    ``failing``: it stopped on ``max_failing_steps`` (new failures with no action that worked since)."""
    seen: list[Fault] = []
    for f in faults:
        if f not in seen:
            seen.append(f)
    listed = "; ".join(f"{_WHAT.get(f.kind, f.kind)}: {_short(f.detail)}" for f in seen[:3])
    kinds = list(dict.fromkeys(f.kind for f in faults if f.kind in _HINTS))
    hints = "; ".join(dict.fromkeys(_HINTS[k] for k in kinds))
    if failing:
        head = f"{len(faults)} failing steps, none of them followed by an action that worked"
        bound = f"The bound is max_failing_steps = {limit}."
    else:
        head = f"{len(faults)} steps in a row made no progress"
        bound = _bound(limit, configured)
    return f"The turn stopped: {head} ({listed}). To go on, {hints}. ({bound})"


def _bound(limit: int, configured: int | None) -> str:
    if configured is None or configured == limit:
        return f"The bound is max_steps_without_progress = {limit}."
    return (
        f"The bound is max_steps_without_progress = {configured}, lowered to {limit}: "
        "the model requests left in this turn's budget."
    )


def _short(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


@dataclass
class ProgressMeter:
    """The progress bound of one turn: steps in a row without progress, steps in a row without a new
    success, and the broken-call run for ``auto``."""

    limit: int = DEFAULT_STALL_LIMIT
    configured: int | None = None
    """The bound as set, when ``limit`` was lowered to the requests left in the turn's budget."""
    failing_limit: int = DEFAULT_FAILING_LIMIT
    progress: TurnProgress = field(default_factory=TurnProgress)
    faults: list[Fault] = field(default_factory=list)
    """The steps since the last progress."""
    failing: list[Fault] = field(default_factory=list)
    """The steps since the first new failure after the last new success (or the user's decision): a
    repeated failure or a broken call between new failures extends the run too, so that new failures
    interleaved with repeated ones (each new one ending the stall run) still end on the bound."""
    broken_run: int = 0
    """Steps in a row whose calls were all broken."""
    shape_limit: int = DEFAULT_SHAPE_LIMIT

    def __post_init__(self) -> None:
        self.progress.shape_limit = self.shape_limit

    def after(self, step: Sequence[ModelMessage]) -> StopTurn | None:
        """Count ``step``; the stop when it is the ``limit``-th in a row without progress or the
        ``failing_limit``-th new failure with no action that worked since."""
        self.broken_run = self.broken_run + 1 if only_broken_calls(step) else 0
        fault = self.progress.judge(step)
        rule = STEP_RULES[fault.kind]
        self.faults = [] if rule.progress else [*self.faults, fault]
        if rule.result:
            self.failing = []
        elif rule.bounded or self.failing:  # once failing, every step without a result extends the run
            self.failing = [*self.failing, fault]
        if len(self.faults) >= self.limit:
            return StopTurn(stop_message(self.faults, self.limit, self.configured), len(self.faults))
        if len(self.failing) >= self.failing_limit:
            return StopTurn(stop_message(self.failing, self.failing_limit, failing=True), len(self.failing))
        return None


__all__ = [
    "DEFAULT_FAILING_LIMIT",
    "DEFAULT_SHAPE_LIMIT",
    "DEFAULT_STALL_LIMIT",
    "KIND_REPEATS",
    "RESULT_REPEATS",
    "STEP_RULES",
    "Fault",
    "FaultKind",
    "ProgressMeter",
    "StepKind",
    "StepRule",
    "StepVerdict",
    "StopTurn",
    "SwitchProtocol",
    "TurnProgress",
    "action_identity",
    "action_shape",
    "code_shape",
    "broken_calls",
    "code_identity",
    "near",
    "only_broken_calls",
    "stop_message",
]
