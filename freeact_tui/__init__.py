"""freeact-tui: a terminal home for a code-action AI agent, and its SDK.

Public names are imported lazily so that ``freeact-tui --version`` and the CLI start fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from freeact_tui.version import __version__

_EXPORTS = {
    "Agent": "freeact_tui.agent.agent",
    "AgentBusy": "freeact_tui.agent.agent",
    "Config": "freeact_tui.project.config",
    "ConfigError": "freeact_tui.project.config",
    "load_config": "freeact_tui.project.config",
    "SessionStore": "freeact_tui.store.sessions",
    "CodeActAgent": "freeact_tui.compat",
    "AgentEvent": "freeact_tui.events",
    "AgentError": "freeact_tui.events",
    "ApprovalRequest": "freeact_tui.events",
    "Cancelled": "freeact_tui.events",
    "CodeExecutionOutput": "freeact_tui.events",
    "CodeExecutionOutputChunk": "freeact_tui.events",
    "Response": "freeact_tui.events",
    "ResponseChunk": "freeact_tui.events",
    "Thoughts": "freeact_tui.events",
    "ThoughtsChunk": "freeact_tui.events",
    "ToolOutput": "freeact_tui.events",
}

if TYPE_CHECKING:
    from freeact_tui.agent.agent import Agent, AgentBusy
    from freeact_tui.compat import CodeActAgent
    from freeact_tui.events import (
        AgentError,
        AgentEvent,
        ApprovalRequest,
        Cancelled,
        CodeExecutionOutput,
        CodeExecutionOutputChunk,
        Response,
        ResponseChunk,
        Thoughts,
        ThoughtsChunk,
        ToolOutput,
    )
    from freeact_tui.project.config import Config, ConfigError, load_config
    from freeact_tui.store.sessions import SessionStore


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'freeact_tui' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [
    "Agent",
    "AgentBusy",
    "AgentError",
    "AgentEvent",
    "ApprovalRequest",
    "Cancelled",
    "CodeActAgent",
    "CodeExecutionOutput",
    "CodeExecutionOutputChunk",
    "Config",
    "ConfigError",
    "Response",
    "ResponseChunk",
    "SessionStore",
    "Thoughts",
    "ThoughtsChunk",
    "ToolOutput",
    "__version__",
    "load_config",
]
