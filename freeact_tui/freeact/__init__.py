"""freeact 0.11's SDK on freeact-tui: port freeact code by changing its imports.

``from freeact import Agent, ApprovalRequest, …`` becomes ``from freeact_tui.freeact import …``
and ``from freeact import config`` becomes ``from freeact_tui.freeact import config``; the names,
event fields and ``config.init()/load()/resolve()`` + ``Agent(runtime)`` work as in freeact 0.11.
What differs is said where it applies (e.g. ``Agent(sandbox_config=…)`` is refused).
"""

from freeact_tui.freeact import config
from freeact_tui.freeact.agent import Agent, AgentTurnError, CancelToken
from freeact_tui.freeact.events import (
    AgentEvent,
    ApprovalRequest,
    Cancelled,
    CodeExecutionOutput,
    CodeExecutionOutputChunk,
    Phase,
    Response,
    ResponseChunk,
    Thoughts,
    ThoughtsChunk,
    ToolOutput,
)
from freeact_tui.freeact.permissions import PermissionManager
from freeact_tui.freeact.toolcalls import (
    CodeAction,
    FileEdit,
    FileRead,
    FileWrite,
    GenericCall,
    ShellAction,
    ToolCall,
    extract_tool_output_text,
    parse_pattern,
    suggest_display,
    suggest_pattern,
)

__all__ = [
    "Agent",
    "AgentEvent",
    "AgentTurnError",
    "ApprovalRequest",
    "CancelToken",
    "Cancelled",
    "CodeAction",
    "CodeExecutionOutput",
    "CodeExecutionOutputChunk",
    "FileEdit",
    "FileRead",
    "FileWrite",
    "GenericCall",
    "PermissionManager",
    "Phase",
    "Response",
    "ResponseChunk",
    "ShellAction",
    "Thoughts",
    "ThoughtsChunk",
    "ToolCall",
    "ToolOutput",
    "config",
    "extract_tool_output_text",
    "parse_pattern",
    "suggest_display",
    "suggest_pattern",
]
