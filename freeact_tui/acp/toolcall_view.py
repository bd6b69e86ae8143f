"""How one of our tool calls reads in an ACP client: title, kind, content, file locations, diff.

A code action is ``execute`` with its code as content; a shell part or script ``execute``; a file read
``read`` with its location; a file write or edit ``edit`` with a diff (old and new text of the whole
file, so the editor can show it as its own diff view); an MCP call (from code or as a JSON tool) ``other`` named
``server.tool``; a subagent task ``think``.
"""

from __future__ import annotations

import base64
import mimetypes
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp import text_block, tool_content, tool_diff_content
from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    ImageContentBlock,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolKind,
)

from freeact_tui.project import files as projectfiles
from freeact_tui.reach import probe
from freeact_tui.text.codeshow import shown, summary
from freeact_tui.text.safe import strip_sgr, visible
from freeact_tui.toolcalls import (
    CodeAction,
    FileCall,
    FileEdit,
    FileRead,
    FileWrite,
    JsonToolCall,
    ProgrammaticToolCall,
    ShellAction,
    ShellScript,
    SubagentTask,
    ToolCall,
)

ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent
# A file bigger than this is not sent whole as a diff's old text (the diff text is shown instead).
DIFF_FILE_LIMIT = 1024 * 1024
IMAGE_LIMIT = 16 * 1024 * 1024  # an image of the output sent to the editor
# Only the tail of a long output is sent with each update: the client keeps the newest content only.
OUTPUT_LIMIT = 64 * 1024


@dataclass(frozen=True)
class CallView:
    """The ACP fields of a tool call."""

    title: str
    kind: ToolKind
    content: list[ToolContent]
    locations: list[ToolCallLocation]
    raw_input: dict[str, Any]


def _fenced(text: str, lang: str) -> str:
    fence = "```"
    while fence in text:  # a fence longer than any run of backticks inside
        fence += "`"
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def _first_line(text: str, limit: int = 80) -> str:
    """A title: the first non-blank line made visible, and how many more lines follow."""
    return summary(text, limit)


def _code(text: str, lang: str) -> ToolContent:
    """Code as the editor shows it: every character of the table visible, long blank runs folded."""
    return tool_content(text_block(_fenced(shown(text), lang)))


def file_path(call: FileCall, working_dir: Path) -> str:
    """The absolute path a file call points to (ACP locations and diffs want absolute paths)."""
    if call.resolved:
        return call.resolved
    path = probe.expanded(call.path)  # ``~nosuchuser/…`` stays as written
    return str(path if path.is_absolute() else working_dir / path)


def _read(path: str) -> str | None:
    try:
        return projectfiles.read_text(Path(path), limit=DIFF_FILE_LIMIT)  # regular and bounded only
    except probe.PROBE_ERRORS:  # not UTF-8 (a ValueError), a name too long, a NUL byte: nothing to show
        return None


def _edit_diff(call: FileEdit, path: str, known: Mapping[str, str]) -> ToolContent:
    old = known[path] if path in known else _read(path)
    if old is not None:
        new = old
        for edit in call.edits:
            if edit.old_text not in new:
                break
            new = new.replace(edit.old_text, edit.new_text, 1)
        else:
            return tool_diff_content(path, new, old)
    return tool_content(text_block(_fenced(call.display_text(), "diff")))


def _write_diff(call: FileWrite, path: str, known: Mapping[str, str]) -> ToolContent:
    old = known[path] if path in known else _read(path) if probe.exists(path) else None
    return tool_diff_content(path, call.content, old)


def describe(
    call: ToolCall, args: dict[str, Any], working_dir: Path, known: Mapping[str, str] | None = None
) -> CallView:
    """The ACP view of ``call`` (``args``: the arguments as the model gave them, sent as ``rawInput``;
    ``known``: texts of files as the editor has them, by absolute path, the diffs' old text before the disk's)."""
    known = known or {}
    match call:
        case CodeAction(code=code):
            return CallView(
                _first_line(code) or "Python", "execute", [_code(code, "python")],
                [], args,
            )  # fmt: skip
        case ShellAction(command=command):
            return CallView(
                f"$ {_first_line(command)}", "execute", [_code(command, "sh")],
                [], args,
            )  # fmt: skip
        case ShellScript(script=script):
            return CallView(
                f"bash: {_first_line(script)}", "execute",
                [_code(script, "bash")], [], args,
            )  # fmt: skip
        case ProgrammaticToolCall(server=server, tool=tool):
            return CallView(visible(f"{server}.{tool}", multiline=False), "other", [], [], args)
        case JsonToolCall(tool_name=name):
            return CallView(visible(name, multiline=False), "other", [], [], args)
        case SubagentTask(prompt=prompt):
            return CallView(
                f"Subagent: {_first_line(prompt)}",
                "think",
                [tool_content(text_block(shown(prompt)))],
                [],
                args,
            )
        case FileRead() as read:
            path = file_path(read, working_dir)
            line = read.offset if read.offset else None
            return CallView(visible(f"Read {read.path}{read.line_range()}", multiline=False), "read", [],
                            [ToolCallLocation(path=path, line=line)], args)  # fmt: skip
        case FileWrite() as write:
            path = file_path(write, working_dir)
            return CallView(visible(f"Write {write.path}", multiline=False), "edit", [_write_diff(write, path, known)],
                            [ToolCallLocation(path=path)], args)  # fmt: skip
        case FileEdit() as edit:
            path = file_path(edit, working_dir)
            return CallView(visible(f"Edit {edit.path}", multiline=False), "edit", [_edit_diff(edit, path, known)],
                            [ToolCallLocation(path=path)], args)  # fmt: skip
    return CallView(_first_line(call.display_text()) or call.kind, "other", [], [], args)


def output_content(
    text: str | None, images: list[Path] | None = None, image: bytes | None = None
) -> list[ToolContent]:
    """A call's output as tool-call content: its text (the tail of a long one) and its images."""
    content: list[ToolContent] = []
    if text:
        tail = text if len(text) <= OUTPUT_LIMIT else "…" + text[-OUTPUT_LIMIT:]
        tail = visible(strip_sgr(tail))  # colours dropped; every other character of the table shown
        content.append(tool_content(text_block(_fenced(tail, ""))))
    for path in images or []:
        try:
            data = projectfiles.read_bytes(path, limit=IMAGE_LIMIT, follow=False)  # the app's own, never a link
        except probe.PROBE_ERRORS:  # a stored image path gone, or one no file can have
            continue
        mime = mimetypes.guess_type(path.name)[0] or "image/png"
        content.append(tool_content(_image(data, mime)))
    if image is not None:
        content.append(tool_content(_image(image, "image/png")))
    return content


def note_content(text: str) -> list[ToolContent]:
    """A short plain note on a tool call (why it was rejected, that it was cancelled)."""
    return [tool_content(text_block(visible(text)))] if text else []


def _image(data: bytes, mime: str) -> ImageContentBlock:
    return ImageContentBlock(type="image", data=base64.b64encode(data).decode("ascii"), mime_type=mime)


__all__ = ["CallView", "ToolContent", "describe", "file_path", "note_content", "output_content"]
