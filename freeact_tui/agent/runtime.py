"""What an agent runs with, resolved once: its settings, model, session id and permission rules.

``Settings`` has one set of defaults, taken from ``Config``, so the SDK and the app cannot drift
apart; ``Settings.from_config`` maps a validated config field by field. ``Runtime`` adds what is
per agent, frozen; ``Runtime.for_subagent`` derives a subagent's runtime from its parent's, so nothing
copies settings by hand. What a turn learns (``McpApis``) is a value the turn's opening returns.
How the main agent and a subagent differ is data, an ``AgentRole`` on the runtime (``MAIN`` or
``SUBAGENT``), chosen once where the runtime is made and read where it matters.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.models import Model

from freeact_tui.actions.file_access import FileAccess
from freeact_tui.agent.settings import Settings
from freeact_tui.checkpoints.checkpointing import Checkpointing
from freeact_tui.execution.base import Executor
from freeact_tui.permissions.rules import PermissionRules


@dataclass(frozen=True)
class McpApis:
    """What a turn learns of the MCP servers once they are ready: their generated APIs as the system
    prompt describes them, and the servers code in the kernel may call (package -> params + timeout).
    ``None``: not known (yet)."""

    description: str | None = None
    ptc_servers: Mapping[str, Mapping[str, Any]] | None = None

    def after(self, learned: McpApis) -> McpApis:
        """These APIs with what a turn learned (what it did not learn stays as it was)."""
        return McpApis(
            learned.description or self.description,
            learned.ptc_servers if learned.ptc_servers is not None else self.ptc_servers,
        )


@dataclass(frozen=True)
class AgentRole:
    """What an agent does by its place in the session: the main agent owns the session, a subagent does
    a task delegated to it in its own kernel, with what its parent has (rules, MCP APIs, checkpoints)."""

    name: str
    connects_mcp_servers: bool
    """It connects the configured MCP servers (a subagent calls the APIs its parent generated)."""
    takes_checkpoint_notes: bool
    """After an undo or a rewind, its model is told what changed, before its next prompt."""
    owns_checkpoints: bool
    """It marks the state it left after each turn and closes the checkpoint store when it stops."""
    counts_subagent_usage: bool
    """Its usage, restored from the session, includes the session's subagents'."""
    writes_session_meta: bool
    """It writes the session's metadata: how to resume it, its title, folder and model."""
    starts_subagents: bool
    """It may delegate tasks to subagents (when the settings enable them)."""

    @staticmethod
    def of(agent_id: str, parent_corr_id: str | None) -> AgentRole:
        """The role of an agent made from ``Agent`` arguments: the main one unless a parent started it or
        it is named other than ``main``."""
        return MAIN if agent_id == "main" and parent_corr_id is None else SUBAGENT


MAIN = AgentRole(
    "main",
    connects_mcp_servers=True,
    takes_checkpoint_notes=True,
    owns_checkpoints=True,
    counts_subagent_usage=True,
    writes_session_meta=True,
    starts_subagents=True,
)
SUBAGENT = AgentRole(
    "subagent",
    connects_mcp_servers=False,
    takes_checkpoint_notes=False,
    owns_checkpoints=False,
    counts_subagent_usage=False,
    writes_session_meta=False,
    starts_subagents=False,
)


@dataclass(frozen=True)
class Runtime:
    """One agent's resolved runtime, as it started. Never changed: what a turn learns (``McpApis``) is
    the agent's, passed on to the subagents it starts (``for_subagent``). The main agent's comes from
    ``agent.resolve_runtime`` (the ``Agent`` arguments), a subagent's from its parent's ``for_subagent``."""

    model: Model
    settings: Settings
    session_id: str
    permissions: PermissionRules
    agent_id: str = "main"
    executor: Executor | None = None
    """An already started executor to use (not stopped by the agent)."""
    parent_corr_id: str | None = None
    apis: McpApis = McpApis()
    """The MCP APIs known when the agent starts (a subagent's: its parent's)."""
    checkpointing: Checkpointing | None = None
    """The session's checkpoints (made by the main agent, shared with its subagents)."""
    file_access: FileAccess | None = None
    """The front end's access to text files (an editor's buffers), shared with subagents."""
    model_spec: str | None = None
    """The model as the user named it (``provider:name``); None for a pydantic-ai model object."""
    role: AgentRole = field(kw_only=True)
    """What this agent does by its place, said by each factory: ``resolve_runtime`` (``AgentRole.of`` its
    arguments) and ``for_subagent`` (``SUBAGENT``)."""

    def launch(self) -> dict[str, str]:
        """How to start this model again (a session's ``launch`` record): model, action protocol, base URL."""
        record = {"action_protocol": str(self.settings.action_protocol)}
        if self.model_spec:
            record["model"] = self.model_spec
        if self.settings.base_url:
            record["base_url"] = self.settings.base_url
        return record

    @property
    def subagents_enabled(self) -> bool:
        return self.settings.enable_subagents and self.role.starts_subagents

    def for_subagent(
        self,
        sub_id: str,
        executor: Executor,
        corr_id: str,
        *,
        permissions: PermissionRules,
        apis: McpApis,
        checkpointing: Checkpointing,
    ) -> Runtime:
        """A subagent's runtime: the parent's model and settings, and what the parent has now (its
        rules, the MCP APIs it learned, its checkpoints); its own id and kernel, no subagents."""
        return Runtime(
            model=self.model,
            settings=dataclasses.replace(self.settings, enable_subagents=False, mcp_servers={}),
            session_id=self.session_id,
            permissions=permissions,
            agent_id=sub_id,
            executor=executor,
            parent_corr_id=corr_id,
            apis=apis,
            checkpointing=checkpointing,
            file_access=self.file_access,
            role=SUBAGENT,
        )


__all__ = ["MAIN", "SUBAGENT", "AgentRole", "McpApis", "Runtime", "Settings"]
