"""The text action protocol: code blocks in the model's reply are the actions (freeact's original protocol).

For models that are weak at tool calls but good at writing code. In ``text`` mode no tool schemas
are sent; every fenced ``python`` block of a reply (and ``bash``/``sh`` blocks, run as ``%%bash``
cells) is a code action. The blocks run in order through the same dispatcher as the code tool
(same events, approval dialog and per-shell-part approvals); their outputs go back to the model as
the next user message; a reply without such a block is the final answer.

Stored, a text-mode session is plain user and assistant messages (freeact loads it); the user
message with the results carries the actions in its request ``metadata`` under ``RESULTS_KEY`` so
the transcript can show them as actions and a resumed session knows its protocol.

``auto`` starts with tool calls and switches the session to ``text`` when the model shows it
cannot call tools (the reply policy decides, ``reply.py``); the switch is an event and is stored.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    UserPromptPart,
)

from freeact_tui.actions.code import ActionOutcome
from freeact_tui.agent.policy.outcomes import RESULTS_KEY
from freeact_tui.agent.policy.written_calls import call_arguments, decode_object, written_tool_calls
from freeact_tui.store.meta_keys import SWITCH_KEY  # the message that told the model of a switch to text
from freeact_tui.store.prompt_record import INTERRUPTED
from freeact_tui.store.step_record import INTERRUPTED_STEP, TextActionRecord, text_actions_meta
from freeact_tui.toolcalls import CODE_TOOL

ProtocolName = Literal["tools", "text", "auto"]


PYTHON_LANGS = frozenset({"python", "py", "python3", "py3", "ipython", "ipython3", "pycon"})
"""The fence tags of a Python block, one table (the tester's ```py3 block was shown, not run)."""
CONSOLE_LANGS = frozenset({"pycon"})
"""Python blocks written as an interactive session: the lines after ``>>>``/``...`` are the code, the
others its output as the model imagined it."""
_PROMPT = re.compile(r"^(?:>>>|\.\.\.)(?: |$)")
SHELL_LANGS = frozenset({"bash", "sh", "shell", "zsh"})

CONVENTION = (
    "To run code, write it in a fenced ```python block (shell scripts in a ```bash block). "
    "Every such block in your reply runs, in order, in a stateful IPython kernel after the user "
    "approves it; its output comes back in the next message. Write no such block when the task is "
    "done: that reply is your final answer."
)

_FENCE_OPEN = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n]*)$")


@dataclass(frozen=True)
class TextAction:
    """One runnable code block of a reply."""

    language: Literal["python", "bash"]
    source: str
    """The block as written."""

    @property
    def code(self) -> str:
        """The cell that runs: a shell block becomes a ``%%bash`` cell."""
        if self.language == "bash":
            return "%%bash\n" + self.source
        return self.source


@dataclass(frozen=True)
class Fence:
    """A closed fenced block of a reply."""

    language: str
    """The first word of its info string, lower case ("" if it has none)."""
    source: str


def fences(text: str) -> list[Fence]:
    """The closed fenced blocks of ``text``, in order (CommonMark fences).

    An unclosed fence at the end (a cut-off reply) is left out: it may be incomplete.
    """
    lines = text.split("\n")
    found: list[Fence] = []
    i = 0
    while i < len(lines):
        opening = _FENCE_OPEN.match(lines[i])
        if opening is None or (opening["fence"][0] == "`" and "`" in opening["info"]):
            i += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        body: list[str] = []
        j = i + 1
        while j < len(lines) and closing.match(lines[j]) is None:
            line = lines[j]
            body.append(line[min(indent, len(line) - len(line.lstrip(" "))) :])
            j += 1
        if j < len(lines):  # closed
            words = opening["info"].strip().split()
            language = words[0].lower().strip("{}.") if words else ""
            source = "\n".join(body).strip("\n")
            if source.strip():
                found.append(Fence(language, source))
        i = j + 1
    return found


def is_python_code(source: str) -> bool:
    """Whether an unlabelled block is Python to run rather than output or prose shown in a fence.

    It must parse (IPython ``!cmd``/``%magic`` lines included) and do something: a statement
    other than a bare expression, a call, or a ``!``/``%`` line. ``42``, ``hello.txt``,
    ``[1, 2]`` or a traceback are not code; ``print(x)``, ``x = 41`` and ``!ls`` are.
    """
    lines = source.split("\n")
    magic = False
    for k, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith(("!", "%")) and len(stripped) > 1 and not stripped[1].isspace():
            magic = True
            lines[k] = line[: len(line) - len(stripped)] + "pass"
    try:
        tree = ast.parse("\n".join(lines))
    except (SyntaxError, ValueError):
        return False
    return magic or any(_acts(statement) for statement in tree.body)


def _acts(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Call | ast.Await)
    return not isinstance(statement, ast.Pass)


def is_literal(source: str) -> bool:
    """Whether a block is only a value: a number, a string, a name, or a list/tuple/set/dict of such.

    Such a block is output shown in a fence (a small model writing the result it expects, a bare
    ``42``), never an action, whatever its fence is labelled.
    """
    try:
        tree = ast.parse(source.strip())
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return bool(re.fullmatch(r"\s*-?\d[\d,._]*\s*", source))  # a number ast cannot read (``1,234``)
    return bool(tree.body) and all(
        isinstance(statement, ast.Expr) and _value_only(statement.value) for statement in tree.body
    )


def _value_only(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant | ast.Name):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return _value_only(node.operand)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return all(_value_only(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _value_only(k) for k in node.keys) and all(map(_value_only, node.values))
    return False


def console_code(source: str) -> str:
    """The code of an interactive session (``>>> x = 1``, ``... ``): its prompted lines, prompts removed;
    a block with no prompt is code as it is."""
    lines = source.splitlines()
    if not any(_PROMPT.match(line) for line in lines):
        return source
    return "\n".join(_PROMPT.sub("", line) for line in lines if _PROMPT.match(line))


def fence_action(fence: Fence) -> TextAction | None:
    """The action a fenced block is: ``python``/``bash`` (and aliases), or an unlabelled block of Python
    code; never a block that is only a literal (``is_literal``)."""
    if fence.language in PYTHON_LANGS or (fence.language == "" and is_python_code(fence.source)):
        source = console_code(fence.source) if fence.language in CONSOLE_LANGS else fence.source
        code = unwrap_code_tool(source)
        return None if is_literal(code) else TextAction("python", code)
    if fence.language in SHELL_LANGS:
        command = fence.source.strip()
        if is_literal(command) and not command.isidentifier():  # ``ls`` is a command, ``42`` is not
            return None
        return TextAction("bash", fence.source)
    return None


def unwrap_code_tool(source: str) -> str:
    """The code of a block that calls the code tool as a function (``ipybox_execute_ipython_cell("!rm x")``,
    ``out = ipybox_execute_ipython_cell("print(1)")``, as small models write); any other block as it is.

    The calls are found by the one parser of calls written as text (``written_calls``).
    """
    calls = [c for c in written_tool_calls(source, {CODE_TOOL: ("code",)}) if c.tool_name == CODE_TOOL]
    codes = [c.args_as_dict().get("code") for c in calls]
    if not codes or not all(isinstance(code, str) and code.strip() for code in codes):
        return source
    return "\n".join(str(code).strip("\n") for code in codes)


def code_blocks(text: str) -> list[TextAction]:
    """The runnable fenced blocks of ``text``, in order: ``python``/``bash`` blocks, and unlabelled
    blocks of Python code (small models often leave out the language)."""
    return [action for fence in fences(text) if (action := fence_action(fence)) is not None]


_TAGGED_CALL = re.compile(r"<(tool_call|tools|function_call)>\s*(\{.*?\})\s*</\1>", re.DOTALL)


def tagged_calls(text: str) -> list[TextAction]:
    """Code from tool calls a model wrote as text (``<tool_call>{"name": …, "arguments": {"code": …}}</tool_call>``).

    Small models often write Hermes/Qwen-style calls into their reply instead of making them; any
    such call with a ``code`` argument is taken as a Python block. The object is decoded as the one
    parser of calls written as text decodes it (``written_calls``: JSON, else a Python literal).
    """
    actions: list[TextAction] = []
    for match in _TAGGED_CALL.finditer(text):
        call = decode_object(match.group(2))
        args = call_arguments(call) if isinstance(call, dict) else None
        code = args.get("code") if args is not None else None
        if isinstance(code, str) and code.strip() and not is_literal(code):
            actions.append(TextAction("python", code.strip("\n")))
    return actions


def text_actions(text: str) -> list[TextAction]:
    """The actions of a reply: its fenced code blocks, or else the code of tool calls written as text."""
    return code_blocks(text) or tagged_calls(text)


def reply_text(response: ModelResponse) -> str:
    return "".join(p.content for p in response.parts if isinstance(p, TextPart))


_THINK = re.compile(r"<(think|thinking|thought)>.*?(?:</\1>|\Z)", re.S | re.I)
_EMPTY_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n`]*\n(?:[ \t]*\n)*[ \t]*\1[ \t]*$", re.M)


def said(text: str) -> str:
    """What a reply says to the user: its text without thinking written as tags, empty code fences
    and surrounding spacing. ``""``: the reply is empty, whatever whitespace or thinking it holds."""
    return _EMPTY_FENCE.sub("", _THINK.sub("", text)).strip()


@dataclass
class BlockRun:
    action: TextAction
    corr_id: str
    outcome: ActionOutcome | None = None
    """``None``: interrupted (cancelled or failed) before it finished."""
    approvals: list[dict[str, Any]] = field(default_factory=list)
    """The decisions on it (stored with its record, for a resumed session)."""

    def record(self) -> TextActionRecord:
        """The block as the results message stores it (what the log showed of it besides the output)."""
        if self.outcome is None:
            return TextActionRecord(self.corr_id, self.action.code, INTERRUPTED, INTERRUPTED_STEP)
        step = self.outcome.record().with_approvals(self.approvals)
        return TextActionRecord(self.corr_id, self.action.code, self.outcome.content, step)


def results_request(done: Sequence[BlockRun], skipped: int, *, switched: str | None = None) -> ModelRequest:
    """The user message that reports the actions' outputs to the model (stored with their metadata)."""
    sections: list[str] = []
    if switched is not None:
        sections.append(f"(Tool calls are off from now on: {CONVENTION})")
    many = len(done) + skipped > 1
    for number, item in enumerate(done, 1):
        label = f"code block {number}" if many else "your code block"
        if item.outcome is None:
            sections.append(f"Output of {label} (interrupted by the user):\n(no result)")
        elif item.outcome.rejected:
            sections.append(f"{label.capitalize()} did not run: {item.outcome.content}")
        else:
            error = " (error)" if item.outcome.is_error else ""
            sections.append(f"Output of {label}{error}:\n{item.outcome.content}")
    if skipped:
        sections.append(f"The {skipped} code block(s) after it did not run.")
    metadata = text_actions_meta([item.record() for item in done])
    if switched is not None:
        metadata[SWITCH_KEY] = switched
    text = "\n\n".join(sections)
    # Images the blocks made go to the model as they do with tool returns.
    attachments = [a for item in done if item.outcome is not None for a in item.outcome.attachments]
    content: str | list[Any] = [text, *attachments] if attachments else text
    return ModelRequest(parts=[UserPromptPart(content)], metadata=metadata)


def switch_request(reason: str) -> ModelRequest:
    """Tells the model that tool calls are off and how to act instead (after broken tool calls)."""
    text = f"Your tool calls did not work, so tool calls are off from now on. {CONVENTION}"
    return ModelRequest(parts=[UserPromptPart(text)], metadata={SWITCH_KEY: reason})


def is_text_session(history: Sequence[ModelMessage]) -> bool:
    """A stored session that ran text actions or was switched to text (``auto`` resumes in text)."""
    return any(
        isinstance(m, ModelRequest) and m.metadata and (RESULTS_KEY in m.metadata or SWITCH_KEY in m.metadata)
        for m in history
    )


__all__ = [
    "CONVENTION",
    "RESULTS_KEY",
    "SWITCH_KEY",
    "BlockRun",
    "Fence",
    "ProtocolName",
    "TextAction",
    "code_blocks",
    "fence_action",
    "fences",
    "is_literal",
    "console_code",
    "is_python_code",
    "is_text_session",
    "reply_text",
    "said",
    "results_request",
    "switch_request",
    "tagged_calls",
    "text_actions",
    "unwrap_code_tool",
]
