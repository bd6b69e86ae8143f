"""freeact 0.11's configuration API: ``init``, ``load``, ``resolve`` over ``.freeact/config.toml``.

``load`` parses the file into ``FreeactConfig`` (freeact's schema: unknown keys are errors, as in
freeact); ``resolve`` turns it into a ``ResolvedRuntime`` that ``freeact_tui.freeact.Agent`` runs.
The settings map onto this app's ``Config`` the same way a freeact project's file is read by the
app itself (``freeact_tui.project.freeact_dir``).
"""

from __future__ import annotations

import copy
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic_ai.models import Model

from freeact_tui.freeact.presets import (
    BASIC_SEARCH_MCP_SERVER_CONFIG,
    FETCH_MCP_SERVER_CONFIG,
    FILESYSTEM_MCP_SERVER_CONFIG,
    GOOGLE_SEARCH_MCP_SERVER_CONFIG,
    HYBRID_SEARCH_MCP_SERVER_CONFIG,
)
from freeact_tui.mcp.discovery import HYBRID_MISSING, hybrid_available
from freeact_tui.project import refusals, trust, trusted
from freeact_tui.project.config import Config
from freeact_tui.project.freeact_dir import map_agent_section, toml_depth_problem
from freeact_tui.project.paths import FREEACT_DIR_NAME
from freeact_tui.project.skills import front_matter, materialize_bundled_skills

CONFIG_FILENAME = "config.toml"
DEFAULT_MODEL_NAME = "google-gla:gemini-3.6-flash"
DEFAULT_MODEL_SETTINGS: dict[str, Any] = {
    "google_thinking_config": {"thinking_level": "medium", "include_thoughts": True}
}
DEFAULT_CONFIG_TOML = f"""\
# freeact configuration (read by freeact and by freeact-tui). Edit freely; it is never rewritten.

[agent]
model = "{DEFAULT_MODEL_NAME}"
# execution_timeout = 300.0     # seconds; 0 disables the timeout
# approval_timeout = 0.0        # seconds; 0 waits forever
# enable_subagents = true
# max_subagents = 5
# images_dir = "images"

[agent.model_settings]
google_thinking_config = {{ thinking_level = "medium", include_thoughts = true }}

# Provider options; `${{VAR}}` reads an environment variable.
# [agent.provider_settings]
# api_key = "${{MY_PROVIDER_KEY}}"
# base_url = "http://127.0.0.1:8080/v1"
"""


class ToolPresets(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    search: bool = False
    fetch: bool = False
    discovery: Literal["basic", "hybrid", "off"] = "basic"


class AgentSection(BaseModel):
    """``[agent]``: freeact's agent settings (pure data)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = DEFAULT_MODEL_NAME
    model_settings: dict[str, Any] = Field(default_factory=lambda: copy.deepcopy(DEFAULT_MODEL_SETTINGS))
    provider_settings: dict[str, Any] | None = None
    tools: ToolPresets = Field(default_factory=ToolPresets)
    execution_timeout: float = Field(default=300, ge=0)
    approval_timeout: float = Field(default=0, ge=0)
    tool_result_inline_max_bytes: int = Field(default=32768, ge=1)
    tool_result_preview_chars: int = Field(default=2048, ge=1)
    enable_persistence: bool = True
    enable_subagents: bool = True
    max_subagents: int = Field(default=5, ge=1)
    images_dir: Path | None = None
    kernel_env: dict[str, str] = Field(default_factory=dict)
    mcp_servers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    ptc_servers: dict[str, dict[str, Any]] = Field(default_factory=dict)


class TerminalSection(BaseModel):
    """``[terminal]``: freeact's terminal settings (read and validated as freeact does; this app's
    terminal has its own keys, so the app does not act on these)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    collapse_thoughts_on_complete: bool = True
    collapse_exec_output_on_complete: bool = True
    collapse_approved_code_actions: bool = False
    collapse_approved_tool_calls: bool = True
    collapse_completed_subagent_tasks: bool = True
    collapse_tool_outputs: bool = True
    keep_rejected_actions_expanded: bool = True
    pin_pending_approval_action_expanded: bool = True
    expand_all_toggle_key: str = Field(default="ctrl+o", min_length=1)


class SkillMetadata(BaseModel):
    """Metadata parsed from a skill's ``SKILL.md`` front matter (freeact's)."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    path: Path


def load_skills_metadata(*, skills_dir: Path, project_skills_dir: Path) -> list[SkillMetadata]:
    """The skills of the workspace (``.freeact/skills``) and the project (``.agents/skills``).

    As freeact's: a skill needs ``name`` and ``description`` in its front matter, else it is skipped.
    """
    found: list[SkillMetadata] = []
    for directory in (skills_dir, project_skills_dir):
        if not directory.is_dir():
            continue
        for skill_file in sorted(directory.glob("*/SKILL.md")):
            try:
                meta = front_matter(trusted.read_text(skill_file, errors="replace"))
            except FileNotFoundError:
                continue
            except OSError as exc:  # not what the trust check read, too big, not a file: said
                refusals.report(refusals.refusal_of("skill", skill_file, exc))
                continue
            if meta.get("name") and "description" in meta:
                found.append(
                    SkillMetadata(name=meta["name"], description=meta["description"], path=skill_file)
                )
    return found


class FreeactConfig(BaseModel):
    """The whole ``.freeact/config.toml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agent: AgentSection = Field(default_factory=AgentSection)
    terminal: TerminalSection = Field(default_factory=TerminalSection)


@dataclass(frozen=True)
class Workspace:
    """The files of a freeact workspace."""

    working_dir: Path

    @property
    def freeact_dir(self) -> Path:
        return self.working_dir / FREEACT_DIR_NAME

    @property
    def config_file(self) -> Path:
        return self.freeact_dir / CONFIG_FILENAME

    @property
    def skills_dir(self) -> Path:
        return self.freeact_dir / "skills"

    @property
    def plans_dir(self) -> Path:
        return self.freeact_dir / "plans"

    @property
    def generated_dir(self) -> Path:
        return self.freeact_dir / "generated"

    @property
    def sessions_dir(self) -> Path:
        return self.freeact_dir / "sessions"

    @property
    def search_db_file(self) -> Path:
        return self.freeact_dir / "search.db"

    @property
    def project_instructions_file(self) -> Path:
        return self.working_dir / "AGENTS.md"

    @property
    def project_skills_dir(self) -> Path:
        return self.working_dir / ".agents" / "skills"

    @property
    def generated_rel_dir(self) -> Path:
        return self.relative_to_working_dir(self.generated_dir)

    @property
    def plans_rel_dir(self) -> Path:
        return self.relative_to_working_dir(self.plans_dir)

    def relative_to_working_dir(self, path: Path) -> Path:
        try:
            return path.relative_to(self.working_dir)
        except ValueError:
            return path

    def images_dir(self, configured: Path | None) -> Path:
        if configured is None:
            return self.working_dir / "images"
        return configured if configured.is_absolute() else self.working_dir / configured


def workspace(working_dir: Path | None = None) -> Workspace:
    return Workspace((working_dir or Path.cwd()).resolve())


def load(working_dir: Path | None = None) -> FreeactConfig:
    """Parse ``.freeact/config.toml`` (defaults when there is none).

    Raises:
        ValueError: the file is not TOML or does not fit the schema (names the file).
    """
    ws = workspace(working_dir)
    if not ws.config_file.exists():
        return FreeactConfig()
    try:
        data = tomllib.loads(trusted.read_text(ws.config_file))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ValueError(f"{ws.config_file}: {exc}") from None
    except RecursionError:
        raise ValueError(f"{ws.config_file}: nests tables or arrays too deeply") from None
    if problem := toml_depth_problem(data):
        raise ValueError(f"{ws.config_file}: {problem}")
    try:
        return FreeactConfig.model_validate(data)
    except ValueError as exc:
        raise ValueError(f"{ws.config_file}: {exc}") from None


def init(working_dir: Path | None = None) -> FreeactConfig:
    """Create the workspace: the default config (never overwritten), the runtime dirs and the
    bundled skills (freeact's three; a skill directory that exists is left as it is)."""
    ws = workspace(working_dir)
    ws.freeact_dir.mkdir(parents=True, exist_ok=True)
    if not ws.config_file.exists():
        ws.config_file.write_text(DEFAULT_CONFIG_TOML, encoding="utf-8")
        trust.note_project_write(ws.config_file, DEFAULT_CONFIG_TOML.encode("utf-8"))  # the app's own write
    for directory in (ws.generated_dir, ws.plans_dir, ws.sessions_dir, ws.skills_dir):
        directory.mkdir(parents=True, exist_ok=True)
    materialize_bundled_skills(
        skills_dir=ws.skills_dir, generated_rel_dir=ws.generated_rel_dir, plans_rel_dir=ws.plans_rel_dir
    )
    return load(ws.working_dir)


@dataclass(frozen=True)
class ResolvedRuntime:
    """What the agent runs with: the parsed section, the workspace, and this app's ``Config``."""

    config: AgentSection
    workspace: Workspace
    model: str | Model
    mcp_servers: dict[str, dict[str, Any]]
    ptc_servers: dict[str, dict[str, Any]]
    kernel_env: dict[str, str]
    enable_subagents: bool
    subagent_mode: bool = False
    app_config: Config = field(repr=False, compare=False, default_factory=Config)
    notices: list[str] = field(default_factory=list, compare=False)

    @property
    def skills_metadata(self) -> list[SkillMetadata]:
        """The skills the agent is told about (``.freeact/skills`` then ``.agents/skills``)."""
        return load_skills_metadata(
            skills_dir=self.workspace.skills_dir, project_skills_dir=self.workspace.project_skills_dir
        )

    @property
    def system_prompt(self) -> str:
        """The system prompt this runtime's agent starts with (``system_prompt`` of the app config wins)."""
        from freeact_tui.agent.prompts import build_system_prompt
        from freeact_tui.mcp.gentools import gentools_root, gentools_section

        if self.app_config.system_prompt is not None:
            return self.app_config.system_prompt
        return build_system_prompt(
            self.working_dir,
            subagents=self.enable_subagents and not self.subagent_mode,
            gentools=gentools_section(gentools_root(self.working_dir), self.working_dir),
            protocol=self.app_config.action_protocol,
        )

    def for_subagent(self) -> ResolvedRuntime:
        """The runtime of a subagent: subagents cannot nest (as in freeact)."""
        return replace(
            self,
            mcp_servers=copy.deepcopy(self.mcp_servers),
            kernel_env=dict(self.kernel_env),
            enable_subagents=False,
            subagent_mode=True,
            app_config=self.app_config.model_copy(update={"enable_subagents": False}),
        )

    @property
    def working_dir(self) -> Path:
        return self.workspace.working_dir

    @property
    def model_settings(self) -> dict[str, Any]:
        return self.config.model_settings

    @property
    def execution_timeout(self) -> float | None:
        return self.config.execution_timeout or None

    @property
    def approval_timeout(self) -> float | None:
        return self.config.approval_timeout or None

    @property
    def images_dir(self) -> Path:
        return self.workspace.images_dir(self.config.images_dir)


def resolve(
    config: FreeactConfig, working_dir: Path | None = None, env: Mapping[str, str] | None = None
) -> ResolvedRuntime:
    """Resolve a parsed config against the environment.

    Raises:
        ValueError: a ``${VAR}`` the config uses is not set (names it), or a value does not fit.
    """
    ws = workspace(working_dir)
    environ = dict(os.environ if env is None else env)
    section = config.agent.model_dump(mode="json", exclude_unset=False)
    section["model_settings"] = config.agent.model_settings
    mapped = map_agent_section(_substitute(section, environ), ws.working_dir, ws.config_file)
    values = dict(mapped.values)
    values["working_dir"] = str(ws.working_dir)
    values["images_dir"] = str(ws.images_dir(config.agent.images_dir))
    values["sessions_dir"] = str(ws.sessions_dir)
    app_config = Config.model_validate(values)
    notices = list(mapped.notices)
    if config.agent.tools.discovery == "hybrid" and not hybrid_available():
        notices.append(HYBRID_MISSING)  # freeact raises here; the app goes on with basic discovery
    servers = {name: server.model_dump() for name, server in app_config.mcp_servers.items()}
    return ResolvedRuntime(
        config=config.agent,
        workspace=ws,
        model=config.agent.model,
        mcp_servers={k: v for k, v in servers.items() if v["mode"] == "json"},
        ptc_servers={k: v for k, v in servers.items() if v["mode"] == "ptc"},
        kernel_env=dict(app_config.kernel_env),
        enable_subagents=config.agent.enable_subagents,
        app_config=app_config,
        notices=notices,
    )


def _substitute(value: Any, env: Mapping[str, str]) -> Any:
    """``${VAR}`` → its value; a missing variable is an error naming it (as in freeact)."""
    import re

    if isinstance(value, str):

        def repl(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in env:
                raise ValueError(f"environment variable {name} is not set (used in the freeact config)")
            return env[name]

        # provider_settings.api_key keeps its reference: the key is read from the environment later.
        return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", repl, value)
    if isinstance(value, list):
        return [_substitute(v, env) for v in value]
    if isinstance(value, dict):
        return {k: (v if k == "api_key" else _substitute(v, env)) for k, v in value.items()}
    return value


__all__ = [
    "BASIC_SEARCH_MCP_SERVER_CONFIG",
    "CONFIG_FILENAME",
    "DEFAULT_CONFIG_TOML",
    "DEFAULT_MODEL_NAME",
    "DEFAULT_MODEL_SETTINGS",
    "FETCH_MCP_SERVER_CONFIG",
    "FILESYSTEM_MCP_SERVER_CONFIG",
    "FREEACT_DIR_NAME",
    "GOOGLE_SEARCH_MCP_SERVER_CONFIG",
    "HYBRID_SEARCH_MCP_SERVER_CONFIG",
    "AgentSection",
    "FreeactConfig",
    "ResolvedRuntime",
    "SkillMetadata",
    "TerminalSection",
    "ToolPresets",
    "Workspace",
    "init",
    "load",
    "load_skills_metadata",
    "materialize_bundled_skills",
    "resolve",
    "workspace",
]
