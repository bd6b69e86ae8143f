"""The older freeact API (``CodeActAgent(model, executor).run(...)``), a thin facade over ``Agent``
(``codeact``); outside the agent core, above it. Also exported as ``freeact_tui.CodeActAgent``."""

from freeact_tui.compat.codeact import (
    CodeActAgent,
    CodeActAgentResponse,
    CodeActAgentTurn,
    CodeActModelResponse,
    CodeActModelTurn,
    CodeExecution,
    CodeExecutionResult,
    MaxStepsReached,
)

__all__ = [
    "CodeActAgent",
    "CodeActAgentResponse",
    "CodeActAgentTurn",
    "CodeActModelResponse",
    "CodeActModelTurn",
    "CodeExecution",
    "CodeExecutionResult",
    "MaxStepsReached",
]
