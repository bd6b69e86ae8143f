"""Configuration: a validated pydantic model loaded from TOML files.

Precedence (highest first): command line > ``--config`` file > project files (``.freeact-tui.toml``
in the working directory, then a freeact project's ``.freeact/config.toml``, see ``freeact_project``)
> user config file > defaults — the project wins over the user, as in freeact. Project files apply
only once the user trusts the folder (``trust``), and even then never turn on ``skip_permissions``,
choose where a key is sent (``api_key_env``, ``base_url`` with a key, ``remote_url``) or read
``${VAR}`` outside ``kernel_env``. Secrets never live here: provider keys come from the providers'
usual environment variables.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from freeact_tui import paths, trust
from freeact_tui.freeact_project import FreeactConfigError, read_freeact_config, toml_depth_problem
from freeact_tui.project_policy import limit_layers, load_project_env, project_layer

ExecutionMode = Literal["local", "sandbox", "docker", "remote"]
ActionProtocolName = Literal["tools", "text", "auto"]
# What the config may say: a protocol, or "default" (chosen by the model, see ``choose_protocol``).
ActionProtocolSetting = Literal["default", "tools", "text", "auto"]


class ConfigError(Exception):
    """A configuration file is broken; ``str(error)`` is a message meant for the user."""


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

    sessions_dir: Path | None = None
    working_dir: Path | None = None
    images_dir: Path | None = None

    execution: ExecutionMode = "local"
    execution_timeout: float = Field(default=300.0, gt=0)
    # Seconds a model request may go without sending anything (headers or a stream chunk) before it
    # counts as stalled: retried if nothing was shown yet, else an error keeping the partial reply.
    model_idle_timeout: float = Field(default=180.0, gt=0)
    approval_timeout: float | None = Field(default=None, gt=0)
    kernel_env: dict[str, str] = Field(default_factory=dict)
    remote_url: str | None = None
    remote_insecure: bool = False
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
    theme: str = "freeact-dark"
    # While the terminal is not focused: a bell and a desktop notification (OSC 9/777) when an
    # approval waits, or when a turn longer than notify_after seconds ends.
    notify_bell: bool = True
    notify_desktop: bool = True
    notify_after: float = Field(default=30.0, ge=0)
    keymap: dict[str, str] = Field(default_factory=dict)

    mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict)

    _notices: list[str] = PrivateAttr(default_factory=list)
    # A config built in code (the SDK, tests) trusts its working dir; ``load_config`` decides otherwise.
    _trust: trust.TrustState | None = PrivateAttr(default=None)
    _reload: Any = PrivateAttr(default=None)

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
        ``.freeact/sessions`` (so both apps list and resume the same sessions), else the data dir."""
        if self.sessions_dir is not None:
            return self.sessions_dir.expanduser().absolute()
        project = paths.find_freeact_project(self.resolved_working_dir())
        if project is not None:
            return project / paths.FREEACT_DIR_NAME / "sessions"
        return paths.default_sessions_dir().expanduser().absolute()

    def resolved_working_dir(self) -> Path:
        return (self.working_dir or Path.cwd()).expanduser().resolve()


_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _expand_env(value: Any) -> Any:
    """Resolve ``${VAR}`` references (for MCP server env/headers, e.g. tokens kept in the environment)."""
    if isinstance(value, str):
        return _ENV_REF.sub(lambda m: os.environ.get(m.group(1), ""), value)
    if isinstance(value, list):
        return [_expand_env(v) for v in value]
    if isinstance(value, dict):
        return {k: _expand_env(v) for k, v in value.items()}
    return value


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


def read_toml(path: Path) -> dict[str, Any]:
    """Read one TOML config file; raise ConfigError with a one-paragraph message on any problem."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise ConfigError(f"Config file not found: {path}") from exc
    except OSError as exc:
        raise ConfigError(f"Cannot read config file {path}: {exc.strerror}") from exc
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"Config file {path} is not UTF-8 text.") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"Config file {path} is not valid TOML: {exc}.") from exc
    except RecursionError:
        raise ConfigError(f"Config file {path} nests tables or arrays too deeply to be a config.") from None
    if problem := toml_depth_problem(data):
        raise ConfigError(f"Config file {path} {problem}.")
    try:
        Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_validation_error(str(path), exc, data)) from None
    return data


# Keys holding paths: a relative value in a config file means relative to that file's directory.
_PATH_KEYS = ("sessions_dir", "working_dir", "images_dir")


def _anchor_paths(data: dict[str, Any], base: Path) -> dict[str, Any]:
    out = dict(data)
    for key in _PATH_KEYS:
        value = out.get(key)
        if isinstance(value, str | Path) and str(value):
            path = Path(value).expanduser()
            out[key] = str(path if path.is_absolute() else (base / path).absolute())
    return out


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict) and key != "mcp_servers":
            out[key] = _merge(out[key], value)
        elif key == "mcp_servers" and isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


def project_layers(folder: Path, notices: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """The project's config layers (lowest first) as ``(source, values)``, without the keys no project
    may set; ``notices`` gets what is refused or not used.

    Raises:
        ConfigError: a project config file is broken.
    """
    layers: list[tuple[str, dict[str, Any]]] = []
    project = paths.find_freeact_project(folder)
    if project is not None:
        try:
            freeact = read_freeact_config(project)
        except FreeactConfigError as exc:
            raise ConfigError(str(exc)) from None
        if freeact is not None:
            try:
                Config.model_validate(_expand_env(freeact.values))
            except ValidationError as exc:
                raise ConfigError(_format_validation_error(str(freeact.path), exc, freeact.values)) from None
            layers.append((str(freeact.path), project_layer(freeact.values, str(freeact.path), notices)))
            notices.extend(freeact.notices)
    own = folder / paths.PROJECT_CONFIG_NAME
    if own.is_file():
        data = _anchor_paths(read_toml(own), own.parent)
        layers.append((str(own), project_layer(data, str(own), notices)))
    return layers


def load_config(
    config_path: Path | None = None,
    overrides: dict[str, Any] | None = None,
    cwd: Path | None = None,
    *,
    trust_project: bool = False,
) -> Config:
    """Load and merge all config sources, then apply command-line ``overrides``.

    Project files (``trust``) apply only when the folder is trusted, or when ``trust_project`` is set
    (``--trust``), which also records the folder as trusted.

    Raises:
        ConfigError: a file is missing, unreadable, not TOML, or has an unknown key or a wrong type.
    """
    folder = (cwd or Path.cwd()).expanduser().resolve()
    state = trust.check(folder)
    if trust_project and not state.trusted:
        try:
            state = trust.trust(state)
        except trust.TrustStoreError as exc:
            raise ConfigError(str(exc)) from None
    notices: list[str] = []
    layers: list[tuple[str, dict[str, Any]]] = []
    if state.trusted:
        layers = project_layers(folder, notices)
        env_file = trust.project_env_file(folder)
        if env_file is not None:
            load_project_env(env_file, notices)
    user: dict[str, Any] = {}
    user_file = paths.user_config_file()
    if user_file.is_file():
        user = _anchor_paths(read_toml(user_file), user_file.parent)
    explicit: dict[str, Any] = {}
    if config_path is not None:
        explicit = _anchor_paths(read_toml(config_path), config_path.parent)
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    given = _anchor_paths(given, Path.cwd())
    user_key = next(
        (layer["api_key_env"] for layer in (given, explicit, user) if layer.get("api_key_env")), None
    )
    limit_layers(layers, user_key=user_key, user_execution=user.get("execution"), notices=notices)
    merged = _expand_env(user)
    for _, layer in layers:
        merged = _merge(merged, _expand_env(layer))
    merged = _merge(merged, _expand_env(explicit))
    merged = _merge(merged, given)
    try:
        config = Config.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(_format_validation_error("the command line", exc, merged)) from None
    config.notices.extend(notices)
    working_dir = config.resolved_working_dir()
    if working_dir != folder:
        # The agent works elsewhere (`working_dir`): that folder's rules, skills and AGENTS.md need its own trust.
        state = trust.check(working_dir)
        if trust_project and not state.trusted:
            try:
                state = trust.trust(state)
            except trust.TrustStoreError as exc:
                raise ConfigError(str(exc)) from None
    config._trust = state
    config._reload = lambda: load_config(config_path, overrides, cwd)
    return config


def save_user_setting(key: str, value: Any) -> None:
    """Persist one top-level setting (e.g. ``theme``) in the user config file, keeping the rest."""
    import tomli_w

    path = paths.user_config_file()
    data: dict[str, Any] = {}
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError):
            return  # never overwrite a file the user must fix by hand
    data[key] = value
    paths.atomic_write_text(path, tomli_w.dumps(data))
