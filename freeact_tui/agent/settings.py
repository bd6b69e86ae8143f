"""The settings of an agent: the keyword settings of ``Agent``, with one set of defaults, ``Config``'s.

``Settings.from_config`` maps a validated config field by field; ``with_overrides`` checks keys
by name (an unknown key is a ``TypeError`` that names it), so the SDK and the app cannot drift.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freeact_tui.project.config import ActionProtocolSetting, Config

if TYPE_CHECKING:  # pydantic-ai takes most of a second to import: the app's boot reads settings before it
    from pydantic_ai.settings import ModelSettings

_AT_LEAST_ONE = (
    "max_model_requests",
    "max_steps_without_progress",
    "max_failing_steps",
    "max_steps_of_one_shape",
)
"""Settings that bound a turn: 0 or less would end every turn before its first request or step."""

DEFAULT_MAX_MODEL_REQUESTS = 100
"""Model requests a turn may make unless told otherwise: a loop that achieves nothing ends with a message."""


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
    provider_keys: Mapping[str, str] = field(default_factory=dict, repr=False)
    """The provider keys a trusted project's ``.env`` brings (``Config.provider_keys``): the model reads
    them explicitly, they never enter ``os.environ``."""
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
    action_protocol: ActionProtocolSetting = _default("action_protocol")
    """``default``: chosen by the model when the agent is built (``models.choose_protocol``)."""
    max_model_requests: int = DEFAULT_MAX_MODEL_REQUESTS
    max_steps_without_progress: int = _default("max_steps_without_progress")
    """Steps in a row without progress before a turn stops (``agent/policy/progress.py``)."""
    max_failing_steps: int = _default("max_failing_steps")
    max_steps_of_one_shape: int = _default("max_steps_of_one_shape")
    """Steps of one code shape a turn counts as progress (``agent/policy/progress.py``)."""
    """New failures with no action that worked since before a turn stops (``agent/policy/progress.py``)."""
    """The most model requests one turn may make (``stream(max_turns=…)`` sets it for one turn)."""
    # The working dir's project rules, skills and AGENTS.md apply (the app: once the user trusts it).
    project_trusted: bool = True
    tool_discovery: str = _default("tool_discovery")

    def __post_init__(self) -> None:
        for name in _AT_LEAST_ONE:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number of at least 1, not {value!r}")
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
            elif f.name == "provider_keys":
                values[f.name] = config.provider_keys
            elif f.name in Config.model_fields:
                values[f.name] = getattr(config, f.name)
        if overrides:
            raise TypeError(f"unknown agent settings: {', '.join(sorted(overrides))}")
        return cls(**values)

    @classmethod
    def names(cls) -> frozenset[str]:
        return frozenset(f.name for f in dataclasses.fields(cls))

    def with_overrides(self, **overrides: Any) -> Settings:
        """These settings with ``overrides`` (fields by name) winning.

        ``None`` for ``working_dir``, ``mcp_servers`` or ``kernel_env`` means the default.

        Raises:
            TypeError: a key is not a field of ``Settings`` (the message names it and the known ones).
        """
        unknown = sorted(set(overrides) - self.names())
        if unknown:
            known = ", ".join(sorted(self.names()))
            raise TypeError(f"unknown agent setting(s): {', '.join(unknown)}. Known settings: {known}")
        given = {k: v for k, v in overrides.items() if not (v is None and k in _NONE_IS_DEFAULT)}
        return dataclasses.replace(self, **given)


_NONE_IS_DEFAULT = frozenset({"working_dir", "mcp_servers", "kernel_env"})


__all__ = ["DEFAULT_MAX_MODEL_REQUESTS", "Settings"]
