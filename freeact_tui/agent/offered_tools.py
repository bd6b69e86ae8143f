"""The tools a model request offers: none in text mode, else the built-in tools and the MCP servers' JSON tools."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.tools import ToolDefinition

from freeact_tui.actions.definitions import tool_definitions
from freeact_tui.agent.policy.reply import ReplyPolicy
from freeact_tui.agent.policy.written_calls import ToolParameters
from freeact_tui.mcp.setup import McpSetup


@dataclass
class OfferedTools:
    """What the next model request offers, for one agent."""

    mcp: McpSetup
    subagents: bool
    policy: ReplyPolicy

    def definitions(self) -> list[ToolDefinition]:
        if self.policy.in_text:  # the actions are code blocks in the reply: no tool schemas
            return []
        return [*tool_definitions(subagents=self.subagents), *self.mcp.tool_definitions()]

    def parameters(self) -> ModelRequestParameters:
        return ModelRequestParameters(function_tools=self.definitions())

    def parameter_names(self) -> ToolParameters:
        """Each offered tool's parameters in order (how calls written as text are read)."""
        return {t.name: list(t.parameters_json_schema.get("properties", {})) for t in self.definitions()}


__all__ = ["OfferedTools"]
