"""The tools the model sees: the code action tool, the file tools and, for the main agent, subagent delegation."""

from __future__ import annotations

from pydantic_ai.tools import ToolDefinition

from freeact_tui.toolcalls import (
    CODE_TOOL,
    EDIT_TEXT_TOOL,
    READ_MEDIA_TOOL,
    READ_TEXT_TOOL,
    RESET_TOOL,
    SUBAGENT_TOOL,
    WRITE_TEXT_TOOL,
)

_CODE = ToolDefinition(
    name=CODE_TOOL,
    description=(
        "Execute Python code in a stateful IPython kernel and return its output. Variables, imports and "
        "definitions persist between calls. Use `!cmd` for shell commands and `%%bash` cells for scripts; "
        "`subprocess` and `os.system` are blocked. Each action is approved by the user before it runs."
    ),
    parameters_json_schema={
        "type": "object",
        "properties": {"code": {"type": "string", "description": "The Python code to execute."}},
        "required": ["code"],
        "additionalProperties": False,
    },
)

_SUBAGENT = ToolDefinition(
    name=SUBAGENT_TOOL,
    description=(
        "Delegate an independent task to a subagent that works in its own kernel and returns its final "
        "answer. Several subagent tasks in one response run in parallel."
    ),
    parameters_json_schema={
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": "The complete task for the subagent."},
            "max_turns": {
                "type": "integer",
                "description": "The most model requests it may make.",
                "default": 100,
            },
        },
        "required": ["prompt"],
        "additionalProperties": False,
    },
)


_PATH = {"type": "string", "description": "Relative to the working directory, or absolute."}


def _tool(name: str, description: str, properties: dict[str, object], required: list[str]) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        description=description,
        parameters_json_schema={
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        },
    )


_EDIT = {
    "type": "object",
    "properties": {"old_text": {"type": "string"}, "new_text": {"type": "string"}},
    "required": ["old_text", "new_text"],
}
FILE_TOOL_DEFINITIONS = [
    _tool(
        READ_TEXT_TOOL,
        "Read a text file, or `limit` lines from line `offset` (1-based). Long files come in pages.",
        {"path": _PATH, "offset": {"type": "integer"}, "limit": {"type": "integer"}},
        ["path"],
    ),
    _tool(
        READ_MEDIA_TOOL,
        "Read an image, audio file or PDF; its content is attached to the result.",
        {"path": _PATH},
        ["path"],
    ),
    _tool(
        WRITE_TEXT_TOOL,
        "Create or overwrite a text file (parent directories are created).",
        {"path": _PATH, "content": {"type": "string"}},
        ["path", "content"],
    ),
    _tool(
        EDIT_TEXT_TOOL,
        "Replace exact text in a file: `old_text` with `new_text`, or several `edits` in order. "
        "Each old text must occur exactly once.",
        {
            "path": _PATH,
            "old_text": {"type": "string"},
            "new_text": {"type": "string"},
            "edits": {"type": "array", "items": _EDIT},
        },
        ["path"],
    ),
]
"""The file tools (freeact 0.11's names and arguments; ``edits`` adds several replacements in one call)."""


_RESET = _tool(
    RESET_TOOL,
    "Restart the kernel: all variables and imports are lost; files and installed packages stay.",
    {},
    [],
)


def tool_definitions(*, subagents: bool) -> list[ToolDefinition]:
    base = [_CODE, *FILE_TOOL_DEFINITIONS, _RESET]
    return [*base, _SUBAGENT] if subagents else base
