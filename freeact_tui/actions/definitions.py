"""The tools the model sees: the code action tool and, for the main agent, subagent delegation."""

from __future__ import annotations

from pydantic_ai.tools import ToolDefinition

from freeact_tui.toolcalls import CODE_TOOL, SUBAGENT_TOOL

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


def tool_definitions(*, subagents: bool) -> list[ToolDefinition]:
    return [_CODE, _SUBAGENT] if subagents else [_CODE]
