"""What an agent runs with, resolved once: its settings, model, session id and permission rules.

``Settings`` has one set of defaults, taken from ``Config``, so the SDK and the app cannot drift
apart; ``Settings.from_config`` maps a validated config field by field. ``Runtime`` adds what is
per agent; ``Runtime.for_subagent`` derives a subagent's runtime from its parent's, so nothing
copies settings by hand.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from freeact_tui.config import ActionProtocolName, Config
from freeact_tui.permissions import PermissionRules

if TYPE_CHECKING:
    from freeact_tui.agent.checkpointing import Checkpointing
    from freeact_tui.execution.base import Executor


def _default(name: str) -> Any:
    """The default of a ``Config`` field: the one source of defaults for the SDK and the app."""
    return Config.model_fields[name].get_default(call_default_factory=True)


@dataclass(frozen=True)
class Settings:
    """The keyword settings of ``Agent`` (see its docstring); defaults are ``Config``'s."""

    model_settings: ModelSettings | None = None
    system_prompt: str | None = None
    sessions_dir: Path | None = None  # None: nothing is persisted (the app passes its store's directory)
    working_dir: Path = field(default_factory=Path.cwd)
    mcp_servers: dict[str, Any] = field(default_factory=dict)
    kernel_env: dict[str, str] = field(default_factory=dict)
    execution: str = _default("execution")
    images_dir: Path | None = None
    execution_timeout: float = _default("execution_timeout")
    model_idle_timeout: float = _default("model_idle_timeout")
    approval_timeout: float | None = _default("approval_timeout")
    enable_subagents: bool = _default("enable_subagents")
    max_subagents: int = _default("max_subagents")
    skip_permissions: bool = _default("skip_permissions")
    base_url: str | None = None
    api_key_env: str | None = None
    tool_result_inline_max_bytes: int = _default("tool_result_inline_max_bytes")
    tool_result_preview_chars: int = _default("tool_result_preview_chars")
    context_window: int | None = _default("context_window")
    compact_threshold: float = _default("compact_threshold")
    trim_result_chars: int = _default("trim_result_chars")
    subagent_pool_size: int = _default("subagent_pool_size")
    docker_image: str | None = _default("docker_image")
    remote_url: str | None = None
    remote_insecure: bool = _default("remote_insecure")
    checkpoints: bool = _default("checkpoints")
    checkpoint_max_file_bytes: int = _default("checkpoint_max_file_bytes")
    checkpoint_max_binary_bytes: int = _default("checkpoint_max_binary_bytes")
    checkpoint_max_files: int = _default("checkpoint_max_files")
    action_protocol: ActionProtocolName = _default("action_protocol")
    # The working dir's project rules, skills and AGENTS.md apply (the app: once the user trusts it).
    project_trusted: bool = True
    tool_discovery: str = _default("tool_discovery")

    def __post_init__(self) -> None:
        object.__setattr__(self, "working_dir", Path(self.working_dir).resolve())
        if isinstance(self.model_settings, dict) and not self.model_settings:
            object.__setattr__(self, "model_settings", None)

    @classmethod
    def from_config(cls, config: Config, **overrides: Any) -> Settings:
        """The settings a config describes (fields of the same name), with ``overrides`` winning."""
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name in overrides:
                values[f.name] = overrides.pop(f.name)
            elif f.name == "sessions_dir":
                values[f.name] = config.resolved_sessions_dir()
            elif f.name == "working_dir":
                values[f.name] = config.resolved_working_dir()
            elif f.name == "mcp_servers":
                values[f.name] = {k: v for k, v in config.mcp_servers.items() if v.enabled}
            elif f.name == "model_settings":
                values[f.name] = config.model_settings or None
            elif f.name == "project_trusted":
                values[f.name] = config.project_trusted
            else:
                values[f.name] = getattr(config, f.name)
        if overrides:
            raise TypeError(f"unknown agent settings: {', '.join(sorted(overrides))}")
        return cls(**values)

    @classmethod
    def names(cls) -> frozenset[str]:
        return frozenset(f.name for f in dataclasses.fields(cls))


@dataclass
class Runtime:
    """One agent's resolved runtime. Mutable only where a turn learns something (the MCP APIs)."""

    model: Model
    settings: Settings
    session_id: str
    permissions: PermissionRules
    agent_id: str = "main"
    executor: Executor | None = None
    """An already started executor to use (not stopped by the agent)."""
    parent_corr_id: str | None = None
    ptc_servers: dict[str, dict[str, Any]] | None = None
    """MCP servers code in the kernel may call (package -> params + timeout), once generated."""
    mcp_description: str | None = None
    """The generated APIs as described in the system prompt."""
    checkpointing: Checkpointing | None = None
    """The session's checkpoints (made by the main agent, shared with its subagents)."""

    @property
    def is_main(self) -> bool:
        return self.parent_corr_id is None and self.agent_id == "main"

    @property
    def subagents_enabled(self) -> bool:
        return self.settings.enable_subagents and self.agent_id == "main"

    def for_subagent(self, sub_id: str, executor: Executor, corr_id: str) -> Runtime:
        """A subagent's runtime: the parent's model, settings, rules and MCP APIs; its own id and kernel."""
        return Runtime(
            model=self.model,
            settings=dataclasses.replace(self.settings, enable_subagents=False, mcp_servers={}),
            session_id=self.session_id,
            permissions=self.permissions,
            agent_id=sub_id,
            executor=executor,
            parent_corr_id=corr_id,
            ptc_servers=self.ptc_servers,
            mcp_description=self.mcp_description,
            checkpointing=self.checkpointing,
        )


__all__ = ["Runtime", "Settings"]
