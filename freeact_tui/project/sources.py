"""Reading the config's sources without validating them: the files and the command line as raw values,
merged by precedence, with the trust decision and the notices (``gather``), imported without pydantic.

``config.load_config`` validates what this gathers (``config.validate``). The command line needs the
two apart: validating imports pydantic and builds the models (a tenth of a second, more than the rest
of the first frame's own work), which the first frame does not need when the very same sources were
valid before (``Sources.fingerprint``, ``ValidSources``): the app then draws from ``LaunchView`` and
validates right after its first frame. Sources never seen valid are validated before the app starts,
so a broken config is a clear message and never a screen that flashes and goes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from freeact_tui.project import files as projectfiles
from freeact_tui.project import paths, trust
from freeact_tui.project import trusted as trustedfiles
from freeact_tui.project.freeact_dir import FreeactConfigError, read_freeact_config, toml_depth_problem
from freeact_tui.project.policy import limit_layers, project_layer
from freeact_tui.project.project_env import EMPTY, lookup, read_project_env
from freeact_tui.version import __version__


class ConfigError(Exception):
    """A configuration file is broken; ``str(error)`` is a message meant for the user."""


_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand_env(value: Any, env: Mapping[str, str] | None = None) -> Any:
    """Resolve ``${VAR}`` references (for MCP server env/headers, e.g. tokens kept in the environment)
    against ``env`` (default ``os.environ``; ``project_env.lookup`` adds a trusted project's ``.env``)."""
    environ: Mapping[str, str] = os.environ if env is None else env
    if isinstance(value, str):
        return _ENV_REF.sub(lambda m: environ.get(m.group(1), ""), value)
    if isinstance(value, list):
        return [expand_env(v, environ) for v in value]
    if isinstance(value, dict):
        return {k: expand_env(v, environ) for k, v in value.items()}
    return value


def read_toml_data(path: Path, *, project: bool = False) -> dict[str, Any]:
    """One TOML config file's values, not validated; ConfigError (one paragraph) if it cannot be read,
    or (``project``: a project's file, read as ``trusted`` reads it) if it is not what the trust check read."""
    try:
        raw = trustedfiles.read_bytes(path) if project else projectfiles.read_bytes(path)
    except FileNotFoundError as exc:
        raise ConfigError(f"Config file not found: {path}") from exc
    except trustedfiles.ProjectFileChanged as exc:
        raise ConfigError(f"{exc}.") from None
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
    return data


# Keys holding paths: a relative value in a config file means relative to that file's directory.
_PATH_KEYS = ("sessions_dir", "working_dir", "images_dir")


def anchor_paths(data: dict[str, Any], base: Path) -> dict[str, Any]:
    out = dict(data)
    for key in _PATH_KEYS:
        value = out.get(key)
        if isinstance(value, str | Path) and str(value):
            path = Path(value).expanduser()
            out[key] = str(path if path.is_absolute() else (base / path).absolute())
    return out


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict) and key != "mcp_servers":
            out[key] = merge(out[key], value)
        elif key == "mcp_servers" and isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


@dataclass
class Sources:
    """A config's sources as read: what each source says (``checks``, each validated on its own so
    that an error names its file) and all of them merged (``merged``, validated last)."""

    checks: list[tuple[str, dict[str, Any]]]
    merged: dict[str, Any]
    notices: list[str]
    trust_state: trust.TrustState
    """The trust of the folder the agent works in (``working_dir``, else the current one)."""
    origins: dict[str, str] = field(default_factory=dict)
    """Where each top-level key set comes from: a file's path, or "the command line" (unset: a default)."""
    project_env: Mapping[str, str] = field(default_factory=dict)
    """The trusted project's ``.env`` (``project_env.read_project_env``), never written to ``os.environ``."""

    def fingerprint(self) -> str:
        """The same for the same values to validate (with this app and Python), whatever they are."""
        payload = [__version__, sys.version, self.checks, self.merged]
        text = json.dumps(payload, sort_keys=True, default=lambda o: [type(o).__name__, str(o)])
        return hashlib.sha256(text.encode()).hexdigest()


def project_sources(
    folder: Path,
    notices: list[str],
    checks: list[tuple[str, dict[str, Any]]],
    own_env: Mapping[str, str | None] | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """The project's config layers (lowest first) as ``(source, values)``, without the keys no project
    may set; ``notices`` gets what is refused or not used, ``checks`` what must validate. Each file is
    used only as the trust check read it (``trusted``); a ``${NAME}`` in it names only the project's own
    ``.env`` values (``own_env``), never the user's environment (``env_refs``).

    Raises:
        ConfigError: a project config file cannot be read.
    """
    layers: list[tuple[str, dict[str, Any]]] = []
    project = paths.find_freeact_project(folder)
    if project is not None:
        try:
            freeact = read_freeact_config(project)
        except FreeactConfigError as exc:
            raise ConfigError(str(exc)) from None
        if freeact is not None:
            checks.append((str(freeact.path), freeact.values))
            layers.append(
                (str(freeact.path), project_layer(freeact.values, str(freeact.path), notices, own_env))
            )
            notices.extend(freeact.notices)
    own = folder / paths.PROJECT_CONFIG_NAME
    if own.is_file():
        data = read_toml_data(own, project=True)
        checks.append((str(own), data))
        layers.append((str(own), project_layer(anchor_paths(data, own.parent), str(own), notices, own_env)))
    return layers


def _trusted(folder: Path, trust_project: bool) -> trust.TrustState:
    state = trust.check(folder)
    if trust_project and not state.trusted:
        try:
            state = trust.trust(state)
        except trust.TrustStoreError as exc:
            raise ConfigError(str(exc)) from None
    return state


def _chosen_working_dir(config_path: Path | None, overrides: Mapping[str, Any] | None) -> Path | None:
    """The ``working_dir`` the user chose (command line, ``--config``, user config), if any: the only
    sources that may choose it. A file that cannot be read says so later, when it is read for good."""
    given = (overrides or {}).get("working_dir")
    if given:
        return Path(str(given)).expanduser().resolve()
    for path in (config_path, paths.user_config_file()):
        if path is None or not path.is_file():
            continue
        try:
            value = read_toml_data(path).get("working_dir")
        except ConfigError:
            return None
        if isinstance(value, str) and value:
            return (path.parent / Path(value).expanduser()).resolve()
    return None


@dataclass(frozen=True)
class StoredLayer:
    """The settings a stored session gives back (its ``launch`` record), as one config layer.

    Never the command line: a store inside a project folder is project data (``in_project``), so its
    values pass the project table (``policy.project_layer``, ``policy.limit_layers``) and rank as a
    project layer; a record in the user's own store ranks above the config files, below the command line.
    """

    source: str
    """Where it was read (the session's ``meta.json``), named in notices and ``Config.origins``."""
    values: dict[str, Any]
    in_project: bool


def gather(
    config_path: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    cwd: Path | None = None,
    *,
    trust_project: bool = False,
    stored: StoredLayer | None = None,
) -> Sources:
    """Read all config sources and merge them (see ``config.load_config``), validating nothing;
    ``stored``: the settings of the session being resumed (``StoredLayer``).

    Raises:
        ConfigError: a file is missing, unreadable or not TOML, or the folder cannot be trusted.
    """
    folder = (cwd or Path.cwd()).expanduser().resolve()
    # ``--trust`` records the trust of one folder, the one the agent works in, which is the one the
    # caller prints (``Sources.trust_state``); a project may not choose it (``PROJECT_REFUSED``), so it
    # is known before any project file is read.
    chosen = _chosen_working_dir(config_path, overrides)
    working = chosen if chosen is not None else folder
    state = _trusted(folder, trust_project and working == folder)
    notices: list[str] = []
    checks: list[tuple[str, dict[str, Any]]] = []
    layers: list[tuple[str, dict[str, Any]]] = []
    project_env: Mapping[str, str] = EMPTY
    if state.trusted:
        env_file = trust.project_env_file(folder)
        if env_file is not None:
            project_env = read_project_env(env_file, notices)
        layers = project_sources(folder, notices, checks, project_env)
    environ = lookup(project_env)  # the user's own config may name the project's values; project data may not
    user: dict[str, Any] = {}
    user_file = paths.user_config_file()
    if user_file.is_file():
        user = read_toml_data(user_file)
        checks.append((str(user_file), user))
        user = anchor_paths(user, user_file.parent)
    explicit: dict[str, Any] = {}
    if config_path is not None:
        explicit = read_toml_data(config_path)
        checks.append((str(config_path), explicit))
        explicit = anchor_paths(explicit, config_path.parent)
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    given = anchor_paths(given, Path.cwd())
    user_key = next(
        (layer["api_key_env"] for layer in (given, explicit, user) if layer.get("api_key_env")), None
    )
    own_record: list[tuple[str, dict[str, Any]]] = []
    if stored is not None and stored.in_project:
        layers.append((stored.source, project_layer(dict(stored.values), stored.source, notices, project_env)))
    elif stored is not None:
        own_record.append((stored.source, dict(stored.values)))
    kernel_names: object = next(
        (layer["project_kernel_env"] for layer in (given, explicit, user) if "project_kernel_env" in layer), []
    )
    limit_layers(
        layers,
        user_key=user_key,
        user_execution=user.get("execution"),
        notices=notices,
        kernel_names=kernel_names if isinstance(kernel_names, list) else [],
    )
    merged = expand_env(user, environ)
    for _, layer in layers:
        merged = merge(merged, layer)  # project data: never expanded from the user's environment (env_refs)
    merged = merge(merged, expand_env(explicit, environ))
    for _, layer in own_record:
        merged = merge(merged, layer)
    merged = merge(merged, given)
    named = [
        (str(user_file), user),
        *layers,
        (str(config_path), explicit),
        *own_record,
        ("the command line", given),
    ]
    origins = {key: source for source, layer in named for key in layer}  # the last (highest) layer wins
    working_dir = merged.get("working_dir")
    if isinstance(working_dir, str) and working_dir:
        # The agent works elsewhere: that folder's rules, skills and AGENTS.md need its own trust.
        # (Any other value is not a path: validating ``merged`` says so.)
        elsewhere = Path(working_dir).expanduser().resolve()
        if elsewhere != folder:
            state = _trusted(elsewhere, trust_project and elsewhere == working)
    return Sources(checks, merged, notices, state, origins, project_env)


class ValidSources:
    """The fingerprints of sources that validated (``Sources.fingerprint``), the last ``KEEP``, in a
    file of the data dir: a launch whose sources are among them draws its first frame before
    validating them. An unreadable or damaged file only means nothing is known valid."""

    KEEP = 32

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths.data_dir() / "cache" / "valid-configs"

    def _known(self) -> list[str]:
        try:
            return projectfiles.read_text(self.path).split()
        except (OSError, UnicodeDecodeError):
            return []

    def __contains__(self, fingerprint: object) -> bool:
        return fingerprint in self._known()

    def add(self, fingerprint: str) -> None:
        """Remember ``fingerprint`` as valid (a failure to write only costs the next launch its head start)."""
        known = [f for f in self._known() if f != fingerprint][-(self.KEEP - 1) :]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            paths.atomic_write_text(self.path, "\n".join([*known, fingerprint]) + "\n")
        except OSError:
            pass


# The texts pydantic takes for a boolean (its lax mode, which the config validates in).
_TRUE = {"1", "true", "yes", "on", "t", "y"}


def _lax_bool(value: object) -> bool:
    """``value`` as pydantic validates it into a ``bool`` (it is known to validate)."""
    if isinstance(value, str):
        return value.strip().lower() in _TRUE
    return bool(value)


@dataclass(frozen=True)
class LaunchView:
    """The settings the app's first frame uses, read from valid merged values without pydantic.

    ``config.Config`` takes these fields' defaults from here (one place for both), and a test checks
    that ``LaunchView.of(config)`` equals ``LaunchView.from_values(...)`` for the same values.
    """

    theme: str = "freeact-dark"
    keymap: Mapping[str, str] = field(default_factory=dict)
    notify_bell: bool = True
    notify_desktop: bool = True
    notify_after: float = 30.0
    working_dir: Path | None = None
    execution: str = "local"
    remote_url: str | None = None
    remote_insecure: bool = False
    notices: tuple[str, ...] = ()

    @classmethod
    def from_values(cls, merged: Mapping[str, Any], notices: list[str]) -> LaunchView:
        """The view of ``merged`` (values that validated: only defaults are filled in)."""
        known = {name: merged[name] for name in cls.__dataclass_fields__ if name in merged}
        if isinstance(known.get("working_dir"), str):
            known["working_dir"] = Path(known["working_dir"])
        if "notify_after" in known:
            known["notify_after"] = float(known["notify_after"])
        for flag in ("notify_bell", "notify_desktop", "remote_insecure"):
            if flag in known:
                known[flag] = _lax_bool(known[flag])
        known["notices"] = tuple(notices)
        return cls(**known)

    @classmethod
    def of(cls, config: Any) -> LaunchView:
        """The view of a validated ``config.Config``."""
        names = [name for name in cls.__dataclass_fields__ if name != "notices"]
        return cls(**{name: getattr(config, name) for name in names}, notices=tuple(config.notices))


@dataclass(frozen=True)
class DeferredConfig:
    """A config whose sources validated before: the first frame draws from ``view``, and ``load()``
    validates them (``config.validate``) once it is drawn.

    Args:
        view: The first frame's settings.
        load: Validates and returns the ``config.Config`` (raises ConfigError as ``load_config``).
    """

    view: LaunchView
    load: Callable[[], Any]


__all__ = [
    "ConfigError",
    "DeferredConfig",
    "LaunchView",
    "Sources",
    "StoredLayer",
    "ValidSources",
    "anchor_paths",
    "expand_env",
    "gather",
    "merge",
    "project_sources",
    "read_toml_data",
]
