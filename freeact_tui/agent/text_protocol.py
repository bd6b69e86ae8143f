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
cannot call tools (see ``ActionProtocol.switch_reason``); the switch is an event and is stored.
"""

from __future__ import annotations

import ast
import json
import re
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from freeact_tui.actions.code import ActionOutcome
from freeact_tui.actions.dispatch import Dispatcher
from freeact_tui.events import AgentEvent, ProtocolSwitch
from freeact_tui.store.transcript import NUDGE_KEY, TEXT_ACTIONS_KEY
from freeact_tui.toolcalls import CODE_TOOL

ProtocolName = Literal["tools", "text", "auto"]

RESULTS_KEY = TEXT_ACTIONS_KEY
"""Request metadata of a results message: the list of actions it reports (id, code, outcome, output)."""
SWITCH_KEY = "freeact_tui_protocol_switch"
"""Request metadata of the message that told the model about a switch to text actions."""

AUTO_SWITCH_MALFORMED = 2
"""In ``auto``: responses in a row whose tool calls were all broken before the session switches to text."""

PYTHON_LANGS = frozenset({"python", "py", "python3", "ipython"})
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


def fence_action(fence: Fence) -> TextAction | None:
    """The action a fenced block is: ``python``/``bash`` (and aliases), or an unlabelled block of Python code."""
    if fence.language in PYTHON_LANGS or (fence.language == "" and is_python_code(fence.source)):
        return TextAction("python", unwrap_code_tool(fence.source))
    if fence.language in SHELL_LANGS:
        return TextAction("bash", fence.source)
    return None


def unwrap_code_tool(source: str) -> str:
    """The code of a block that calls the code tool as a function (``ipybox_execute_ipython_cell("!rm x")``,
    as small models write); any other block as it is."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return source
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return source
    call = tree.body[0].value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == CODE_TOOL):
        return source
    given = [*call.args, *(k.value for k in call.keywords if k.arg == "code")]
    if len(given) == 1 and isinstance(given[0], ast.Constant) and isinstance(given[0].value, str):
        return given[0].value.strip("\n")
    return source


def code_blocks(text: str) -> list[TextAction]:
    """The runnable fenced blocks of ``text``, in order: ``python``/``bash`` blocks, and unlabelled
    blocks of Python code (small models often leave out the language)."""
    return [action for fence in fences(text) if (action := fence_action(fence)) is not None]


_HOWTO = re.compile(
    r"\bhere(?:'|\u2019)?s\s+how\b|\byou\s+(?:can|could)\s+(?:use|do|run|try)\b"
    r"|\bthis\s+(?:code|script|command)\s+(?:will|should|would)\b|\bwhen\s+you\s+run\b",
    re.IGNORECASE,
)
"""Words of a reply that tells the user how to do the task (with code to run) instead of doing it."""
HOWTO_REASON = "the reply shows code to run instead of running it"
"""The nudge's reason for such a reply (``agent/nudge.py``)."""


def tells_how(response: ModelResponse) -> bool:
    """The reply has a runnable code block and tells the user how to run it ("Here's how you can do
    it: … This code will …"), as small models answer after a step that worked instead of taking the
    next one."""
    text = reply_text(response)
    return bool(_HOWTO.search(text)) and bool(code_blocks(text))


def nudge_reason(message: ModelMessage) -> str | None:
    """Why ``message`` nudged the model (``agent/nudge.py``: a request whose metadata says so), else ``None``."""
    if (
        isinstance(message, ModelRequest)
        and isinstance(message.metadata, dict)
        and NUDGE_KEY in message.metadata
    ):
        return str(message.metadata[NUDGE_KEY])
    return None


def is_nudge(message: ModelMessage) -> bool:
    return nudge_reason(message) is not None


_TAGGED_CALL = re.compile(r"<(tool_call|tools|function_call)>\s*(\{.*?\})\s*</\1>", re.DOTALL)


def tagged_calls(text: str) -> list[TextAction]:
    """Code from tool calls a model wrote as text (``<tool_call>{"name": …, "arguments": {"code": …}}</tool_call>``).

    Small models often write Hermes/Qwen-style calls into their reply instead of making them; any
    such call with a ``code`` argument is taken as a Python block.
    """
    actions: list[TextAction] = []
    for match in _TAGGED_CALL.finditer(text):
        try:
            call = json.loads(match.group(2))
            args = call.get("arguments", call.get("parameters", {}))
            if isinstance(args, str):
                args = json.loads(args)
        except (ValueError, AttributeError):
            continue
        code = args.get("code") if isinstance(args, dict) else None
        if isinstance(code, str) and code.strip():
            actions.append(TextAction("python", code.strip("\n")))
    return actions


def text_actions(text: str) -> list[TextAction]:
    """The actions of a reply: its fenced code blocks, or else the code of tool calls written as text."""
    return code_blocks(text) or tagged_calls(text)


def reply_text(response: ModelResponse) -> str:
    return "".join(p.content for p in response.parts if isinstance(p, TextPart))


@dataclass
class _Done:
    action: TextAction
    corr_id: str
    outcome: ActionOutcome | None = None
    """``None``: interrupted (cancelled or failed) before it finished."""


def results_request(done: Sequence[_Done], skipped: int, *, switched: str | None = None) -> ModelRequest:
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
    metadata: dict[str, Any] = {
        RESULTS_KEY: [
            {
                "id": item.corr_id,
                "code": item.action.code,
                "outcome": "interrupted" if item.outcome is None else item.outcome.metadata()["outcome"],
                "output": "Interrupted by user." if item.outcome is None else item.outcome.content,
            }
            for item in done
        ]
    }
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


def _ran(part: ToolReturnPart) -> str | None:
    """The outcome of a tool call that ran (``ok``/``error``; ``""``: a freeact session stores none), else ``None``."""
    meta = part.metadata if isinstance(part.metadata, dict) else {}
    outcome = meta.get("outcome")
    if meta.get("malformed") or outcome not in (None, "ok", "error"):
        return None  # broken, rejected or interrupted
    return outcome or ""


def _tool_returns(messages: Sequence[ModelMessage]) -> Iterator[ToolReturnPart]:
    for message in messages:
        if isinstance(message, ModelRequest):
            yield from (p for p in message.parts if isinstance(p, ToolReturnPart))


def _had_working_tool_call(history: Sequence[ModelMessage]) -> bool:
    """The model made a tool call that ran (any tool: code, file, subagent; not broken, rejected or interrupted)."""
    return any(_ran(part) is not None for part in _tool_returns(history))


def _failing(turn: Sequence[ModelMessage]) -> bool:
    """The turn's last tool call that ran ended in an error (code blocks run since do not change that)."""
    outcomes = [o for o in map(_ran, _tool_returns(turn)) if o is not None]
    return bool(outcomes) and outcomes[-1] == "error"


def _answers_nudge(response: ModelResponse, turn: Sequence[ModelMessage]) -> bool:
    """The reply (``turn[-1]``) answers a nudge: the agent told the model to act.

    Not a reply that, told it showed code instead of running it, again tells how (with the answer
    now, as a small model does: "The result is 145. … Here's how you can do it: …"): that is the answer.
    """
    reason = nudge_reason(turn[-2]) if len(turn) >= 2 else None
    return reason is not None and not (reason == HOWTO_REASON and tells_how(response))


def repeats_last_actions(actions: Sequence[TextAction], turn: Sequence[ModelMessage]) -> bool:
    """Whether ``actions`` are exactly the code of the turn's previous step (its blocks or code tool calls).

    Such a reply repeats itself (small models restate the code they ran in their answer): it is the
    answer, and its blocks do not run again. Code that ran earlier, with other steps since, may
    run again (the same import after a ``pip install``).
    """
    codes = [a.code for a in actions]
    for message in reversed(turn[:-1]):  # turn[-1] is the reply itself
        if (
            isinstance(message, ModelRequest)
            and isinstance(message.metadata, dict)
            and RESULTS_KEY in message.metadata
        ):
            ran = message.metadata[RESULTS_KEY]
            return isinstance(ran, list) and codes == [a.get("code") for a in ran if isinstance(a, dict)]
        if isinstance(message, ModelResponse):
            calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
            if calls:
                return codes == [_code_arg(c) for c in calls]
    return False


def _code_arg(call: ToolCallPart) -> object:
    if call.tool_name != CODE_TOOL:
        return None
    try:
        return call.args_as_dict().get("code")
    except ValueError:
        return None


@dataclass
class ActionProtocol:
    """One agent's action protocol: ``tools`` or ``text`` now, and (``auto``) when to switch.

    Args:
        configured: the configured protocol.
        emit: puts an event into the running turn's stream.
        ids: the event ids for a correlation id.
    """

    configured: ProtocolName
    emit: Callable[[AgentEvent], None]
    ids: Callable[[str], dict[str, Any]]
    current: Literal["tools", "text"] = "tools"
    _resumed: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        self.current = "text" if self.configured == "text" else "tools"

    @property
    def text(self) -> bool:
        return self.current == "text"

    def resume(self, history: Sequence[ModelMessage]) -> None:
        """Once per agent: an ``auto`` session that had switched to text stays in text."""
        if self._resumed:
            return
        self._resumed = True
        if self.configured == "auto" and is_text_session(history):
            self.current = "text"

    def switch_reason(self, response: ModelResponse, history: Sequence[ModelMessage]) -> str | None:
        """Why an ``auto`` session switches to text on this reply without tool calls, if it does.

        The rule: the reply has a runnable code block but no tool call, and the model has never
        made a working tool call in this session (a model that can call tools and shows code in
        its answer is not switched).
        """
        if self.configured != "auto" or self.text:
            return None
        if not text_actions(reply_text(response)) or _had_working_tool_call(history):
            return None
        return "the model wrote its code in a code block instead of calling the tool"

    def runs_blocks_to_repair(self, response: ModelResponse, turn: Sequence[ModelMessage]) -> bool:
        """In ``auto`` (still on tool calls): whether this reply's code blocks run although it has no tool call.

        The rule: they run when the last tool call of this turn (``turn``: its messages) that ran
        ended in an error. The task is then not done, and a block in the reply is the model's next step
        (``!pip install sympy`` after an ``ImportError``), written instead of called: the user
        approves it like any action. The same holds for the reply to a nudge (``agent/nudge.py``):
        the model was just told to act. Otherwise, after a tool call that worked, a reply's blocks
        are examples in an answer and never run.
        """
        if self.configured != "auto" or self.text:
            return False
        return bool(text_actions(reply_text(response))) and (_failing(turn) or _answers_nudge(response, turn))

    def switch_after_malformed(self, malformed_steps: int) -> str | None:
        """In ``auto``: switch after ``AUTO_SWITCH_MALFORMED`` responses in a row of only broken tool calls."""
        if self.configured != "auto" or self.text or malformed_steps < AUTO_SWITCH_MALFORMED:
            return None
        return f"the model sent broken tool calls {malformed_steps} times in a row"

    def switch(self, reason: str) -> None:
        self.current = "text"
        self.emit(ProtocolSwitch("text", f"Switched to text actions: {reason}.", **self.ids("")))

    async def run(
        self,
        dispatcher: Dispatcher,
        actions: Sequence[TextAction],
        record: Callable[[ModelMessage], None],
        *,
        switched: str | None = None,
    ) -> bool:
        """Run the blocks in order, each approved like a code tool call; record the results message.

        Stops at the first block that is rejected, fails or kills the kernel (the later ones did not
        run and the model is told so). Returns whether the turn must stop (rejected, kernel died).
        A cancellation records what finished, the running block as interrupted, and propagates.
        """
        done: list[_Done] = []
        try:
            for action in actions:
                item = _Done(action, f"text_{uuid.uuid4().hex[:16]}")
                done.append(item)
                call = ToolCallPart(CODE_TOOL, {"code": action.code}, tool_call_id=item.corr_id)
                item.outcome = await dispatcher.run(call)
                if item.outcome.rejected or item.outcome.kernel_died or item.outcome.is_error:
                    break
        finally:
            if done:
                record(results_request(done, len(actions) - len(done), switched=switched))
        last = done[-1].outcome
        return last is not None and (last.rejected or last.kernel_died)


__all__ = [
    "AUTO_SWITCH_MALFORMED",
    "CONVENTION",
    "RESULTS_KEY",
    "SWITCH_KEY",
    "ActionProtocol",
    "HOWTO_REASON",
    "is_nudge",
    "nudge_reason",
    "tells_how",
    "ProtocolName",
    "TextAction",
    "Fence",
    "code_blocks",
    "fence_action",
    "fences",
    "is_python_code",
    "unwrap_code_tool",
    "tagged_calls",
    "text_actions",
    "is_text_session",
    "repeats_last_actions",
    "reply_text",
    "results_request",
    "switch_request",
]
