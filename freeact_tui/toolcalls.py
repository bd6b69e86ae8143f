"""Typed tool calls: what an agent wants to do, as shown to the user and matched by permission rules.

The one place that knows the model-facing tool names and how a stored tool call (name and
arguments) becomes a typed call: the agent, the store's transcript and the UI all use
``call_from_tool(name, args)``. Imports nothing else of freeact_tui.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

CODE_TOOL = "ipybox_execute_ipython_cell"
"""The code action tool the model calls (freeact's name, kept so sessions move between the two)."""
SUBAGENT_TOOL = "subagent_task"
RESET_TOOL = "ipybox_reset"
"""A fresh kernel on the model's request (freeact's name): asked like a JSON tool call."""
"""The delegation tool offered to the main agent."""
READ_TEXT_TOOL = "filesystem_read_text_file"
READ_MEDIA_TOOL = "filesystem_read_media_file"
WRITE_TEXT_TOOL = "filesystem_write_text_file"
EDIT_TEXT_TOOL = "filesystem_edit_text_file"
FILE_TOOLS = (READ_TEXT_TOOL, READ_MEDIA_TOOL, WRITE_TEXT_TOOL, EDIT_TEXT_TOOL)
"""The file tools, named as freeact 0.11 names them so sessions move between the two."""


@dataclass(frozen=True)
class ToolCall:
    """Base of every action that needs a decision."""

    @property
    def kind(self) -> str:
        raise NotImplementedError

    @property
    def subject(self) -> str:
        """What permission patterns are matched against (a command, a tool name, …)."""
        raise NotImplementedError

    def display_text(self) -> str:
        """The action in full, verbatim, as shown in the approval dialog."""
        raise NotImplementedError

    def suggested_pattern(self) -> str:
        """A sensible default pattern for an "always"/"session" rule."""
        return self.subject


@dataclass(frozen=True)
class CodeAction(ToolCall):
    """A Python cell for the kernel (may contain ``!cmd`` lines, ``%%bash`` cells, MCP API calls)."""

    code: str

    @property
    def kind(self) -> str:
        return "code"

    @property
    def subject(self) -> str:
        return self.code.strip()  # rules match the cell's text (``*`` for any code)

    def display_text(self) -> str:
        return self.code

    def suggested_pattern(self) -> str:
        return "*"


@dataclass(frozen=True)
class ShellAction(ToolCall):
    """One simple shell command (a part of a composite ``!`` command), Python variables expanded."""

    command: str
    full_command: str = ""

    @property
    def kind(self) -> str:
        return "shell"

    @property
    def subject(self) -> str:
        return self.command

    def display_text(self) -> str:
        return self.command

    @property
    def installs_packages(self) -> bool:
        """It installs Python packages into the kernel's environment (see ``installs_packages``)."""
        return installs_packages(self.command)

    def suggested_pattern(self) -> str:
        try:
            words = shlex.split(self.command)
        except ValueError:
            words = self.command.split()
        if not words:
            return self.command
        if len(words) >= 2 and words[0] in _SUBCOMMAND_TOOLS and not words[1].startswith("-"):
            return f"{words[0]} {words[1]} *"
        return f"{words[0]} *" if len(words) > 1 else words[0]


_SUBCOMMAND_TOOLS = {"git", "pip", "uv", "npm", "cargo", "docker", "kubectl", "go", "make", "poetry"}


def installs_packages(command: str) -> bool:
    """True when a shell command installs Python packages (``pip install``, ``python -m pip install``,
    ``uv pip install``; ``%pip`` arrives as ``<python> -m pip …``), so a dialog can say so."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    while words and ("=" in words[0] and not words[0].startswith("=") or words[0] in ("sudo", "env", "command")):
        words = words[1:]  # VAR=value and wrappers before the program
    if not words:
        return False
    program = words[0].rsplit("/", 1)[-1]
    if re.fullmatch(r"pip(\d+(\.\d+)?)?", program):
        rest = words[1:]
    elif program.startswith("python") and words[1:3] == ["-m", "pip"]:
        rest = words[3:]
    elif program == "uv" and words[1:2] == ["pip"]:
        rest = words[2:]
    else:
        return False
    return next((w for w in rest if not w.startswith("-")), "") == "install"


@dataclass(frozen=True)
class ShellScript(ToolCall):
    """A ``%%bash`` / ``%%sh`` cell, approved as one script."""

    script: str

    @property
    def kind(self) -> str:
        return "script"

    @property
    def installs_packages(self) -> bool:
        """A line of it installs Python packages (see ``installs_packages``)."""
        return any(installs_packages(line) for line in self.script.splitlines())

    @property
    def subject(self) -> str:
        return self.script

    def display_text(self) -> str:
        return self.script

    def suggested_pattern(self) -> str:
        return "*"


@dataclass(frozen=True)
class ProgrammaticToolCall(ToolCall):
    """An MCP tool called from code through the generated Python API."""

    server: str
    tool: str
    args: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def kind(self) -> str:
        return "mcp"

    @property
    def subject(self) -> str:
        return f"{self.server}.{self.tool}"

    def display_text(self) -> str:
        return f"{self.subject}({json.dumps(self.args, indent=2, ensure_ascii=False, default=str)})"

    def suggested_pattern(self) -> str:
        return self.subject


@dataclass(frozen=True)
class JsonToolCall(ToolCall):
    """A JSON tool call the model made directly (MCP servers in ``json`` mode)."""

    tool_name: str
    tool_args: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def kind(self) -> str:
        return "tool"

    @property
    def subject(self) -> str:
        return self.tool_name

    def display_text(self) -> str:
        return f"{self.tool_name}({json.dumps(self.tool_args, indent=2, ensure_ascii=False, default=str)})"


@dataclass(frozen=True)
class SubagentTask(ToolCall):
    """Delegation of a task to a subagent."""

    prompt: str
    max_turns: int = 100

    @property
    def kind(self) -> str:
        return "subagent"

    @property
    def subject(self) -> str:
        return SUBAGENT_TOOL

    def display_text(self) -> str:
        return self.prompt

    def suggested_pattern(self) -> str:
        return SUBAGENT_TOOL


@dataclass(frozen=True)
class NamedPath:
    """A path a code action names that resolves outside the working directory or into the app's own
    installation (``pathreach.named_paths``): shown with the approval request, never enforced."""

    path: str
    app_install: bool = False
    """Inside the app's package or the site-packages it runs from (outside the working dir or not)."""


@dataclass(frozen=True)
class FileCall(ToolCall):
    """A file tool call: ``path`` as the model wrote it.

    ``resolved`` is where it points (symlinks followed, as the kernel sees it) and ``outside`` says
    that this is outside the working directory; both are filled in before the call is approved
    (a call rebuilt from a stored session has neither).
    """

    path: str
    resolved: str = field(default="", kw_only=True)
    outside: bool = field(default=False, kw_only=True)

    @property
    def subject(self) -> str:
        return self.path

    @property
    def paths(self) -> list[str]:
        """What ``path:`` rules look at: the path as written and where it really points."""
        return [p for p in (self.path, self.resolved) if p]

    def suggested_pattern(self) -> str:
        return self.path


@dataclass(frozen=True)
class FileRead(FileCall):
    """Reading a text file (a line range) or a media file (``media``)."""

    offset: int | None = None
    limit: int | None = None
    media: bool = False

    @property
    def kind(self) -> str:
        return "read"

    def line_range(self) -> str:
        """`` (lines 10-19)``, `` (from line 10)`` or nothing (the whole file)."""
        if self.offset is None and self.limit is None:
            return ""
        start = self.offset or 1
        return f" (lines {start}-{start + self.limit - 1})" if self.limit else f" (from line {start})"

    def display_text(self) -> str:
        return f"read {'media file' if self.media else 'text file'} {self.path}{self.line_range()}"


@dataclass(frozen=True)
class FileWrite(FileCall):
    """Writing a whole text file; ``diff`` is the unified diff against what is there (computed before approval)."""

    content: str = field(default="", hash=False, compare=False)
    diff: str = field(default="", kw_only=True, hash=False, compare=False)

    @property
    def kind(self) -> str:
        return "write"

    def display_text(self) -> str:
        return self.diff or f"write {self.path}\n{self.content}"


@dataclass(frozen=True)
class TextEdit:
    """One exact replacement of an edit."""

    old_text: str
    new_text: str


@dataclass(frozen=True)
class FileEdit(FileCall):
    """Exact replacements in a text file; ``diff`` is what they change (computed before approval)."""

    edits: tuple[TextEdit, ...] = field(default=(), hash=False, compare=False)
    diff: str = field(default="", kw_only=True, hash=False, compare=False)

    @property
    def kind(self) -> str:
        return "write"

    def display_text(self) -> str:
        if self.diff:
            return self.diff
        return f"edit {self.path}\n" + "\n".join(f"- {e.old_text}\n+ {e.new_text}" for e in self.edits)


def file_edits(args: dict[str, Any]) -> list[TextEdit] | None:
    """The replacements of an edit call: ``edits`` [{old_text, new_text}] and/or ``old_text``/``new_text``.

    ``None`` when they are malformed (not strings, an empty list).
    """
    raw: list[Any] = []
    if "old_text" in args or "new_text" in args:
        raw.append({"old_text": args.get("old_text"), "new_text": args.get("new_text", "")})
    extra = args.get("edits")
    if extra is not None:
        if not isinstance(extra, list):
            return None
        raw.extend(extra)
    edits: list[TextEdit] = []
    for item in raw:
        if not isinstance(item, dict):
            return None
        old, new = item.get("old_text"), item.get("new_text", "")
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        edits.append(TextEdit(old, new))
    return edits or None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def call_record(call: ToolCall) -> dict[str, Any]:
    """A JSON-able record of a call that is not a model's tool call itself (a shell part, a script, an
    MCP call from code), for the session file; ``{"kind": ...}`` alone for the others."""
    match call:
        case ShellAction(command=command, full_command=full):
            return {"kind": "shell", "command": command, "full_command": full}
        case ShellScript(script=script):
            return {"kind": "script", "script": script}
        case ProgrammaticToolCall(server=server, tool=tool, args=args):
            return {
                "kind": "mcp",
                "server": server,
                "tool": tool,
                "args": json.loads(json.dumps(args, default=str)),
            }
    return {"kind": call.kind}


def call_from_record(record: dict[str, Any]) -> ToolCall | None:
    """The call behind a ``call_record``; ``None`` for a record of another kind or a malformed one."""
    kind = record.get("kind")
    if kind == "shell" and isinstance(record.get("command"), str):
        full = record.get("full_command")
        return ShellAction(record["command"], full if isinstance(full, str) else "")
    if kind == "script" and isinstance(record.get("script"), str):
        return ShellScript(record["script"])
    if kind == "mcp" and isinstance(record.get("server"), str) and isinstance(record.get("tool"), str):
        args = record.get("args")
        return ProgrammaticToolCall(record["server"], record["tool"], args if isinstance(args, dict) else {})
    return None


def call_from_tool(tool_name: str, args: dict[str, Any]) -> ToolCall:
    """The typed call behind a model's tool call (as stored in history), whatever its arguments."""
    if tool_name == CODE_TOOL and isinstance(args.get("code"), str):
        return CodeAction(args["code"])
    if tool_name == SUBAGENT_TOOL and isinstance(args.get("prompt"), str):
        max_turns = args.get("max_turns", 100)
        return SubagentTask(
            args["prompt"], max_turns if isinstance(max_turns, int) and max_turns > 0 else 100
        )
    path = args.get("path")
    if tool_name in FILE_TOOLS and isinstance(path, str):
        if tool_name in (READ_TEXT_TOOL, READ_MEDIA_TOOL):
            return FileRead(
                path,
                _int_or_none(args.get("offset")),
                _int_or_none(args.get("limit")),
                media=tool_name == READ_MEDIA_TOOL,
            )
        if tool_name == WRITE_TEXT_TOOL and isinstance(args.get("content"), str):
            return FileWrite(path, args["content"])
        edits = file_edits(args) if tool_name == EDIT_TEXT_TOOL else None
        if edits is not None:
            return FileEdit(path, tuple(edits))
    return JsonToolCall(tool_name, args)
