"""Configuration: a validated pydantic model loaded from TOML files.

Precedence (highest first): command line > ``--config`` file > project files (``.freeact-tui.toml``
in the working directory, then a freeact project's ``.freeact/config.toml``, see ``freeact_project``)
> user config file > defaults — the project wins over the user, as in freeact. Project files apply
only once the user trusts the folder (``trust``), and even then never set a key of
``project_policy.PROJECT_REFUSED`` (``skip_permissions``, where a key or the conversation goes, where the
app keeps its state, what runs as the kernel, the keymap) or read ``${VAR}`` outside ``kernel_env``. Secrets never live here: provider keys come from the providers'
usual environment variables.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from freeact_tui.project import files as projectfiles
from freeact_tui.project import paths, trust
from freeact_tui.project.policy import bound_kernel_names
from freeact_tui.project.project_env import provider_keys, read_project_env
from freeact_tui.project.sources import (
    ConfigError,
    LaunchView,
    Sources,
    StoredLayer,
    gather,
    project_sources,
    read_toml_data,
)

ExecutionMode = Literal["local", "sandbox", "docker", "remote"]
ActionProtocolName = Literal["tools", "text", "auto"]
# What the config may say: a protocol, or "default" (chosen by the model, see ``choose_protocol``).
ActionProtocolSetting = Literal["default", "tools", "text", "auto"]


# The first frame's settings have their defaults there (the app may draw it before validating).
_LAUNCH = LaunchView()


class McpServerConfig(BaseModel):
    """One MCP server: ``command`` (stdio) or ``url`` (streamable HTTP)."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    # "ptc": generated Python API called from code actions; "json": plain JSON tool calls.
    mode: Literal["ptc", "json"] = "ptc"
    excluded_tools: list[str] = Field(default_factory=list)
    enabled: bool = True
    timeout: float = 30.0

    def model_post_init(self, __context: Any) -> None:
        if (self.command is None) == (self.url is None):
            raise ValueError("set exactly one of `command` (stdio) or `url` (streamable HTTP)")


class Config(BaseModel):
    """All settings of the app and the agent. ``config.example.toml`` documents each key."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    model_settings: dict[str, Any] = Field(default_factory=dict)
    system_prompt: str | None = None
    # How the model acts: "tools" (calls the code tool), "text" (fenced python/bash blocks in its
    # reply are the actions: for models weak at tool calls), "auto" (tools; switches to text when
    # the model shows it cannot call tools), "default" (by the model: tools for the major
    # providers' known models, auto for a base_url server, Ollama and unknown models).
    action_protocol: ActionProtocolSetting = "default"
    # Tool discovery as freeact's: "basic" offers pytools_list_categories / pytools_list_tools,
    # "hybrid" freeact's search server (needs freeact[search]), "off" neither.
    tool_discovery: Literal["basic", "hybrid", "off"] = "basic"
    # Steps in a row without progress (broken or refused calls, the same failure again, replies that
    # neither act nor answer) before a turn stops with a message saying what kept failing.
    max_steps_without_progress: int = Field(default=3, ge=1)
    # Failing steps (each with an error new to the turn: progress, but not for ever) with no action
    # that worked since, before a turn stops.
    max_failing_steps: int = Field(default=5, ge=1)
    # Steps of one code shape (the same code with other names, strings, numbers, or one element more)
    # that count as progress, whatever they print; past it such a step is no progress.
    max_steps_of_one_shape: int = Field(default=8, ge=1)

    sessions_dir: Path | None = None
    working_dir: Path | None = None
    images_dir: Path | None = None

    execution: ExecutionMode = _LAUNCH.execution  # type: ignore[assignment]
    execution_timeout: float = Field(default=300.0, gt=0)
    # Seconds a model request may go without sending anything (headers or a stream chunk) before it
    # counts as stalled: retried if nothing was shown yet, else an error keeping the partial reply.
    model_idle_timeout: float = Field(default=180.0, gt=0)
    approval_timeout: float | None = Field(default=None, gt=0)
    kernel_env: dict[str, str] = Field(default_factory=dict)
    # The names of the variables a trusted project's kernel_env may set (none by default: a variable the
    # kernel holds configures every program it runs); only the user's own config sets this.
    project_kernel_env: list[str] = Field(default_factory=list)
    remote_url: str | None = None
    remote_insecure: bool = _LAUNCH.remote_insecure
    docker_image: str = "freeact-tui-kernel:latest"

    tool_result_inline_max_bytes: int = Field(default=32768, ge=256)
    tool_result_preview_chars: int = Field(default=2048, ge=64)

    # Long sessions: the model's window (None: the provider's figure or a table), when to compact, and
    # how many characters of an old tool result are sent (0: never trim).
    context_window: int | None = Field(default=None, ge=1024)
    compact_threshold: float = Field(default=0.85, gt=0.1, le=1.0)
    trim_result_chars: int = Field(default=2000, ge=0)

    enable_subagents: bool = True
    max_subagents: int = Field(default=5, ge=1)
    subagent_pool_size: int = Field(default=1, ge=0)

    # Undo: a checkpoint of the working directory before each approved action that can write.
    checkpoints: bool = True
    checkpoint_max_file_bytes: int = Field(default=5 * 1024 * 1024, ge=0)
    checkpoint_max_binary_bytes: int = Field(default=1024 * 1024, ge=0)
    checkpoint_max_files: int = Field(default=50_000, ge=1)

    skip_permissions: bool = False
    theme: str = _LAUNCH.theme
    # While the terminal is not focused: a bell and a desktop notification (OSC 9/777) when an
    # approval waits, or when a turn longer than notify_after seconds ends.
    notify_bell: bool = _LAUNCH.notify_bell
    notify_desktop: bool = _LAUNCH.notify_desktop
    notify_after: float = Field(default=_LAUNCH.notify_after, ge=0)
    keymap: dict[str, str] = Field(default_factory=dict)

    mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict)

    _notices: list[str] = PrivateAttr(default_factory=list)
    # A config built in code (the SDK, tests) trusts its working dir; ``load_config`` decides otherwise.
    _trust: trust.TrustState | None = PrivateAttr(default=None)
    _reload: Any = PrivateAttr(default=None)
    _origins: dict[str, str] = PrivateAttr(default_factory=dict)
    _project_env: Mapping[str, str] = PrivateAttr(default_factory=dict)

    @property
    def project_env(self) -> Mapping[str, str]:
        """The trusted project's ``.env`` as read once (``project_env.read_project_env``): never in
        ``os.environ``; ``${VAR}`` in the config and the model's provider keys read it explicitly."""
        return self._project_env

    @property
    def provider_keys(self) -> Mapping[str, str]:
        """The keys for the model the project's ``.env`` brings: a provider's key itself
        (``project_env.provider_keys``), and the variable ``api_key_env`` names (a project may not set
        ``api_key_env``, so the user chose it, and the user's ``base_url`` is where it goes)."""
        keys = dict(provider_keys(self._project_env))
        if self.api_key_env and self.api_key_env in self._project_env:
            keys[self.api_key_env] = self._project_env[self.api_key_env]
        return MappingProxyType(keys)

    @property
    def origins(self) -> dict[str, str]:
        """Where each key set comes from (a file, "the command line"); a key not in it has its default."""
        return self._origins

    @property
    def notices(self) -> list[str]:
        """What loading noticed and the user should read (e.g. freeact settings that do not apply)."""
        return self._notices

    @property
    def trust_state(self) -> trust.TrustState | None:
        """The working dir's project files and whether they are trusted (``None``: not loaded from files)."""
        return self._trust

    @property
    def project_trusted(self) -> bool:
        """Whether the working dir's project files (rules, skills, AGENTS.md) may apply."""
        return self._trust is None or self._trust.trusted

    def reloaded(self) -> Config:
        """The config loaded again from the same sources (after the user trusted the folder)."""
        if self._reload is None:
            return self
        result: Config = self._reload()
        return result

    def resolved_sessions_dir(self) -> Path:
        """Where sessions live: ``sessions_dir`` if set, else a freeact project's
        ``.freeact/sessions`` (so both apps list and resume the same sessions) once the folder is
        trusted (a planted session is never resumed), else the data dir."""
        if self.sessions_dir is not None:
            return self.sessions_dir.expanduser().absolute()
        trusted = self.project_trusted
        project = paths.find_freeact_project(self.resolved_working_dir()) if trusted else None
        if project is not None:
            return project / paths.FREEACT_DIR_NAME / "sessions"
        return paths.default_sessions_dir().expanduser().absolute()

    def resolved_working_dir(self) -> Path:
        return (self.working_dir or Path.cwd()).expanduser().resolve()


def _describe_expected(error: Any) -> str:
    kind = error.get("type", "")
    msg = str(error.get("msg", "invalid value"))
    if kind == "extra_forbidden":
        return "this key is unknown (check the spelling against config.example.toml)"
    if kind == "literal_error":
        return msg.replace("Input should be", "expected")
    return msg[0].lower() + msg[1:] if msg else "invalid value"


def _format_validation_error(source: str, exc: ValidationError, data: dict[str, Any]) -> str:
    lines = []
    for error in exc.errors():
        loc = ".".join(str(p) for p in error.get("loc", ()) if p != "__root__")
        given = error.get("input")
        shown = "" if error.get("type") in ("extra_forbidden", "missing") else f" (got {given!r})"
        lines.append(f"  key `{loc or '<file>'}`: {_describe_expected(error)}{shown}")
    return f"Invalid configuration in {source}:\n" + "\n".join(lines)


def _checked(source: str, data: dict[str, Any]) -> Config:
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_validation_error(source, exc, data)) from None


def read_toml(path: Path) -> dict[str, Any]:
    """Read one TOML config file and validate it; raise ConfigError with a one-paragraph message on any problem."""
    data = read_toml_data(path)
    _checked(str(path), data)
    return data


def project_layers(folder: Path, notices: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """The project's config layers (lowest first) as ``(source, values)``, without the keys no project
    may set; ``notices`` gets what is refused or not used.

    Raises:
        ConfigError: a project config file is broken.
    """
    checks: list[tuple[str, dict[str, Any]]] = []
    env_file = trust.project_env_file(folder)
    own_env = read_project_env(env_file, []) if env_file is not None else {}
    layers = project_sources(folder, notices, checks, own_env)
    for source, data in checks:
        _checked(source, data)
    allowed = _user_kernel_names()
    for source, layer in layers:
        bound_kernel_names(source, layer, allowed, notices)  # as ``limit_layers`` will, with the user's list
    return layers


def _user_kernel_names() -> list[str]:
    """The user config file's ``project_kernel_env`` (none when unset or unreadable: the launch says why)."""
    user = paths.user_config_file()
    try:
        names = read_toml_data(user).get("project_kernel_env", []) if user.is_file() else []
    except ConfigError:
        return []
    return [str(n) for n in names] if isinstance(names, list) else []


def validate(sources: Sources, reload: Callable[[], Config] | None = None) -> Config:
    """The config ``sources`` make (see ``config_sources.gather``), each source validated on its own
    first (an error names its file), then all of them merged.

    Args:
        sources: What was read.
        reload: How ``Config.reloaded`` loads it again (after the user trusted the folder).

    Raises:
        ConfigError: a source has an unknown key or a wrong type.
    """
    for source, data in sources.checks:
        _checked(source, data)
    config = _checked("the command line", sources.merged)
    config.notices.extend(sources.notices)
    config._trust = sources.trust_state
    config._reload = reload
    config._origins = dict(sources.origins)
    config._project_env = sources.project_env
    return config


def load_config(
    config_path: Path | None = None,
    overrides: dict[str, Any] | None = None,
    cwd: Path | None = None,
    *,
    trust_project: bool = False,
    stored: StoredLayer | None = None,
) -> Config:
    """Load and merge all config sources, then apply command-line ``overrides`` (``stored``: the
    settings of a resumed session, ``sources.StoredLayer``).

    Project files (``trust``) apply only when the folder is trusted, or when ``trust_project`` is set
    (``--trust``), which also records the folder as trusted.

    Raises:
        ConfigError: a file is missing, unreadable, not TOML, or has an unknown key or a wrong type.
    """
    sources = gather(config_path, overrides, cwd, trust_project=trust_project, stored=stored)
    return validate(sources, lambda: load_config(config_path, overrides, cwd, stored=stored))


def save_user_setting(key: str, value: Any) -> None:
    """Persist one top-level setting (e.g. ``theme``) in the user config file, keeping the rest."""
    import tomli_w

    path = paths.user_config_file()
    data: dict[str, Any] = {}
    if path.exists() or path.is_symlink():  # whatever stands there: read as a regular, bounded file or kept
        try:
            data = tomllib.loads(projectfiles.read_text(path))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return  # never overwrite a file the user must fix by hand
    data[key] = value
    paths.atomic_write_text(path, tomli_w.dumps(data))
