"""Typed tool calls: what an agent wants to do, as shown to the user and matched by permission rules.

The one place that knows the model-facing tool names and how a stored tool call (name and
arguments) becomes a typed call: the agent, the store's transcript and the UI all use
``call_from_tool(name, args)``. Imports nothing else of freeact_tui.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from typing import Any

CODE_TOOL = "ipybox_execute_ipython_cell"
"""The code action tool the model calls (freeact's name, kept so sessions move between the two)."""
SUBAGENT_TOOL = "subagent_task"
"""The delegation tool offered to the main agent."""


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


@dataclass(frozen=True)
class ShellScript(ToolCall):
    """A ``%%bash`` / ``%%sh`` cell, approved as one script."""

    script: str

    @property
    def kind(self) -> str:
        return "script"

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
    return JsonToolCall(tool_name, args)
