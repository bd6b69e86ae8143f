"""freeact 0.11's typed tool calls, built from this app's own (``freeact_tui.toolcalls``).

The classes have freeact's names and fields (``tool_name`` first, then what the call carries) so
``match`` statements written for freeact work unchanged; ``from_ours`` converts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from freeact_tui import toolcalls as ours

# Commands whose second word picks what they do: a pattern keeps it (``git status *``).
_SUBCOMMAND_TOOLS = frozenset(
    {"git", "pip", "docker", "kubectl", "npm", "yarn", "cargo", "go", "apt", "brew", "conda", "poetry", "uv"}
    | {"make", "systemctl"}
)


@dataclass(frozen=True)
class ToolCall:
    """Base class of typed tool calls."""

    tool_name: str

    @classmethod
    def from_raw(cls, tool_name: str, tool_args: dict[str, Any]) -> ToolCall:
        """The typed call of a raw tool name and its arguments."""
        return from_ours(ours.call_from_tool(tool_name, tool_args))

    def to_pattern(self) -> str:
        return self.tool_name

    def to_display(self) -> str:
        return ""

    def from_pattern(self, pattern: str) -> ToolCall:
        return GenericCall(tool_name=pattern, tool_args={}, ptc=False)


@dataclass(frozen=True)
class GenericCall(ToolCall):
    """A tool call without special handling (JSON MCP tools, subagent tasks, Python API calls)."""

    tool_args: dict[str, Any]
    ptc: bool = False


@dataclass(frozen=True)
class ShellAction(ToolCall):
    """A shell command from a code action (``tool_name`` ``bash``) or a ``%%bash`` cell (``shell_magic``)."""

    command: str

    def to_pattern(self) -> str:
        if self.tool_name == "shell_magic":
            return self.command.replace("\n", "\\n")
        return suggest_shell_pattern(self.command)

    def to_display(self) -> str:
        if self.tool_name == "shell_magic":
            lines = [line for line in self.command.splitlines() if line.strip()]
            return lines[0] + (f" (+{len(lines) - 1} lines)" if len(lines) > 1 else "") if lines else ""
        return self.command

    def from_pattern(self, pattern: str) -> ToolCall:
        command = pattern.replace("\\n", "\n") if self.tool_name == "shell_magic" else pattern
        return ShellAction(tool_name=self.tool_name, command=command)


@dataclass(frozen=True)
class CodeAction(ToolCall):
    """A code action (Python run in the kernel)."""

    code: str

    def from_pattern(self, pattern: str) -> ToolCall:
        return CodeAction(tool_name=pattern, code="")


def _split_pattern(pattern: str, default_name: str, default_path: str) -> tuple[str, str]:
    parts = pattern.split(None, 1)
    return (parts[0] if parts else default_name), (parts[1] if len(parts) > 1 else default_path)


@dataclass(frozen=True)
class FileRead(ToolCall):
    """A file read."""

    path: str
    offset: int | None
    limit: int | None

    def to_pattern(self) -> str:
        return f"{self.tool_name} {self.path}"

    def from_pattern(self, pattern: str) -> ToolCall:
        name, path = _split_pattern(pattern, self.tool_name, self.path)
        return FileRead(tool_name=name, path=path, offset=None, limit=None)


@dataclass(frozen=True)
class FileWrite(ToolCall):
    """A file write."""

    path: str
    content: str

    def to_pattern(self) -> str:
        return f"{self.tool_name} {self.path}"

    def from_pattern(self, pattern: str) -> ToolCall:
        name, path = _split_pattern(pattern, self.tool_name, self.path)
        return FileWrite(tool_name=name, path=path, content="")


@dataclass(frozen=True)
class FileEdit(ToolCall):
    """A file edit by exact replacement."""

    path: str
    old_text: str
    new_text: str

    def to_pattern(self) -> str:
        return f"{self.tool_name} {self.path}"

    def from_pattern(self, pattern: str) -> ToolCall:
        name, path = _split_pattern(pattern, self.tool_name, self.path)
        return FileEdit(tool_name=name, path=path, old_text="", new_text="")


def from_ours(call: ours.ToolCall) -> ToolCall:
    """freeact's typed call for one of this app's calls."""
    match call:
        case ours.CodeAction(code=code):
            return CodeAction(tool_name=ours.CODE_TOOL, code=code)
        case ours.ShellAction(command=command):
            return ShellAction(tool_name="bash", command=command)
        case ours.ShellScript(script=script):
            return ShellAction(tool_name="shell_magic", command=script)
        case ours.ProgrammaticToolCall(server=server, tool=tool, args=args):
            return GenericCall(tool_name=f"{server}_{tool}", tool_args=dict(args), ptc=True)
        case ours.JsonToolCall(tool_name=name, tool_args=args):
            return GenericCall(tool_name=name, tool_args=dict(args), ptc=False)
        case ours.SubagentTask(prompt=prompt, max_turns=max_turns):
            return GenericCall(
                tool_name=ours.SUBAGENT_TOOL, tool_args={"prompt": prompt, "max_turns": max_turns}
            )
        case ours.FileRead(path=path, offset=offset, limit=limit, media=media):
            name = "filesystem_read_media_file" if media else "filesystem_read_text_file"
            return FileRead(tool_name=name, path=path, offset=offset, limit=limit)
        case ours.FileWrite(path=path, content=content):
            return FileWrite(tool_name="filesystem_write_text_file", path=path, content=content)
        case ours.FileEdit(path=path, edits=edits):
            old, new = (edits[0].old_text, edits[0].new_text) if edits else ("", "")
            return FileEdit(tool_name="filesystem_edit_text_file", path=path, old_text=old, new_text=new)
    return GenericCall(tool_name=call.kind, tool_args={}, ptc=False)


def suggest_pattern(tool_call: ToolCall) -> str:
    """A permission pattern for a tool call."""
    return tool_call.to_pattern()


def suggest_display(tool_call: ToolCall) -> str:
    """What an approval bar shows for a tool call ("" means: show the pattern)."""
    return tool_call.to_display()


def parse_pattern(pattern: str, template: ToolCall) -> ToolCall:
    """The call a user-edited pattern describes, of the same type as ``template``."""
    return template.from_pattern(pattern)


def suggest_shell_pattern(command: str) -> str:
    """``cmd sub *`` for commands with subcommands, else ``cmd *``."""
    parts = command.split()
    if not parts:
        return "*"
    if len(parts) >= 2 and parts[0] in _SUBCOMMAND_TOOLS:
        return f"{parts[0]} {parts[1]} *"
    return f"{parts[0]} *"


def extract_tool_output_text(content: object) -> str:
    """Readable text of a tool result of any shape."""
    match content:
        case str():
            return content
        case {"content": str(text)}:
            return text
        case {"text": str(text)}:
            return text
        case dict():
            return json.dumps(content, indent=2)
        case list():
            return "\n".join(extract_tool_output_text(item) for item in content)
    return str(content)
