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
    description="Run Python in the stateful IPython kernel (`!cmd` and `%%bash` for shell); returns the output.",
    parameters_json_schema={
        "type": "object",
        "properties": {"code": {"type": "string"}},
        "required": ["code"],
        "additionalProperties": False,
    },
)

_SUBAGENT = ToolDefinition(
    name=SUBAGENT_TOOL,
    description="Delegate a self-contained task to a subagent (own kernel); returns its answer.",
    parameters_json_schema={
        "type": "object",
        "properties": {"prompt": {"type": "string"}, "max_turns": {"type": "integer"}},
        "required": ["prompt"],
        "additionalProperties": False,
    },
)


_PATH = {"type": "string"}


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
        "Read a text file (paged), or `limit` lines from line `offset` (1-based).",
        {"path": _PATH, "offset": {"type": "integer"}, "limit": {"type": "integer"}},
        ["path"],
    ),
    _tool(
        READ_MEDIA_TOOL,
        "Read an image, audio file or PDF (attached to the result).",
        {"path": _PATH},
        ["path"],
    ),
    _tool(
        WRITE_TEXT_TOOL,
        "Create or overwrite a text file.",
        {"path": _PATH, "content": {"type": "string"}},
        ["path", "content"],
    ),
    _tool(
        EDIT_TEXT_TOOL,
        "Replace `old_text` (must occur once) with `new_text` in a file, or several `edits` in order.",
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
    "Restart the kernel (all variables lost; files stay).",
    {},
    [],
)


def tool_definitions(*, subagents: bool) -> list[ToolDefinition]:
    base = [_CODE, *FILE_TOOL_DEFINITIONS, _RESET]
    return [*base, _SUBAGENT] if subagents else base
