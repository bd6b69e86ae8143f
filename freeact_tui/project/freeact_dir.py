"""A freeact project's own config (``.freeact/config.toml``), read as settings of this app.

freeact 0.11 keeps its settings in the ``[agent]`` table of ``.freeact/config.toml``. This module maps
what has a meaning here onto ``Config`` keys; ``load_config`` reads it as the lowest source, so
freeact-tui's own files and the command line win where both set something. What has no meaning
here (freeact's bundled tool presets, its terminal section, ``enable_persistence = false``) is
named in ``notices`` rather than dropped silently.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from freeact_tui.project import paths, trust, trusted

CONFIG_FILENAME = "config.toml"
PERMISSIONS_FILENAME = "permissions.toml"

# freeact MCP server keys → ours (freeact spells the tool filter ``exclude_tools``).
_SERVER_KEYS = {"command": "command", "args": "args", "env": "env", "url": "url", "headers": "headers"}
_SERVER_RENAMED = {
    "exclude_tools": "excluded_tools",
    "excluded_tools": "excluded_tools",
    "timeout": "timeout",
}
_ENV_ONLY = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NO_TIMEOUT = 1e9  # freeact's 0 means "no timeout"; ours must be positive


# Deeper than any real config: checked before a parsed file is walked recursively (merged, validated).
MAX_TOML_DEPTH = 32
# The [agent] keys this module maps (or names in a notice); any other is named as not used.
_AGENT_KEYS = frozenset(
    {
        "model", "model_settings", "kernel_env", "enable_subagents", "max_subagents", "provider_settings",
        "execution_timeout", "approval_timeout", "tool_result_inline_max_bytes", "tool_result_preview_chars",
        "images_dir", "mcp_servers", "ptc_servers", "enable_persistence", "tools",
    }
)


class FreeactConfigError(Exception):
    """``.freeact/config.toml`` cannot be read; ``str(error)`` names the file and the problem."""


def toml_depth_problem(data: Any, limit: int = MAX_TOML_DEPTH) -> str | None:
    """What is wrong with how deeply ``data`` (parsed TOML) nests, or ``None`` (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return f"nests tables or arrays more than {limit} levels deep"
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    return None


def _parse_toml(path: Path, what: str) -> dict[str, Any]:
    try:
        data = tomllib.loads(trusted.read_bytes(path).decode("utf-8"))
    except trusted.ProjectFileChanged as exc:
        raise FreeactConfigError(f"{exc}.") from None
    except OSError as exc:
        raise FreeactConfigError(f"Cannot read {what} {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise FreeactConfigError(f"{what.capitalize()} {path} is not UTF-8 text.") from exc
    except tomllib.TOMLDecodeError as exc:
        raise FreeactConfigError(f"{what.capitalize()} {path} is not valid TOML: {exc}.") from exc
    except RecursionError:
        raise FreeactConfigError(f"{what.capitalize()} {path} nests tables or arrays too deeply.") from None
    if problem := toml_depth_problem(data):
        raise FreeactConfigError(f"{what.capitalize()} {path} {problem}.")
    return data


@dataclass
class FreeactSettings:
    """What a freeact project's config contributes: ``Config`` keys, and notes for the user."""

    path: Path
    values: dict[str, Any] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)


def config_file(project: Path) -> Path:
    return project / paths.FREEACT_DIR_NAME / CONFIG_FILENAME


def read_freeact_config(project: Path) -> FreeactSettings | None:
    """Map ``<project>/.freeact/config.toml`` onto ``Config`` keys (``None`` when there is no file).

    Raises:
        FreeactConfigError: the file is not readable, not UTF-8, not TOML, or ``[agent]`` is not a table.
    """
    path = config_file(project)
    if not path.is_file():
        return None
    data = _parse_toml(path, "the freeact config")
    agent = data.get("agent", {})
    if not isinstance(agent, dict):
        raise FreeactConfigError(f"The freeact config {path}: [agent] must be a table.")
    settings = map_agent_section(agent, project, path)
    terminal = data.get("terminal")
    if isinstance(terminal, dict) and terminal:
        settings.notices.append(
            f"{path}: [terminal] {', '.join(sorted(terminal))} "
            f"{'is' if len(terminal) == 1 else 'are'} not used by freeact-tui (its blocks fold with keys)."
        )
    for other in sorted(set(data) - {"agent", "terminal"}):
        settings.notices.append(f"{path}: [{other}] is not used by freeact-tui.")
    return settings


def map_agent_section(agent: dict[str, Any], project: Path, path: Path) -> FreeactSettings:
    """Map freeact's ``[agent]`` table (as a dict) onto ``Config`` keys; ``path`` names it in notices."""
    out = FreeactSettings(path)
    values, notices = out.values, out.notices
    for unknown in sorted(set(agent) - _AGENT_KEYS):
        notices.append(f"{path}: [agent] {unknown} is not used by freeact-tui.")
    for key in ("model", "model_settings", "kernel_env", "enable_subagents", "max_subagents"):
        if key in agent:
            values[key] = agent[key]
    provider = agent.get("provider_settings")
    if isinstance(provider, dict):
        _map_provider(provider, out)
    for key, convert in _LIMITS.items():
        if key in agent:
            values[key] = convert(agent[key])
    if isinstance(agent.get("images_dir"), str):
        images = Path(agent["images_dir"]).expanduser()
        values["images_dir"] = str(images if images.is_absolute() else project / images)
    servers: dict[str, dict[str, Any]] = {}
    for table, mode in (("mcp_servers", "json"), ("ptc_servers", "ptc")):
        for name, spec in (agent.get(table) or {}).items():
            if isinstance(spec, dict):
                servers[name] = _server(spec, mode, f"{out.path}: [agent.{table}.{name}]", notices)
    if servers:
        values["mcp_servers"] = servers
    if agent.get("enable_persistence") is False:
        notices.append(
            f"{out.path}: enable_persistence = false is ignored; freeact-tui always keeps sessions."
        )
    tools = agent.get("tools")
    if isinstance(tools, dict):
        _map_tools(tools, out)
    return out


def _map_provider(provider: dict[str, Any], out: FreeactSettings) -> None:
    """freeact's ``provider_settings``: the server's address and the variable holding its key."""
    if "base_url" in provider:
        out.values["base_url"] = provider["base_url"]
    api_key = provider.get("api_key")
    if isinstance(api_key, str):
        ref = _ENV_ONLY.fullmatch(api_key.strip())
        if ref:
            out.values["api_key_env"] = ref.group(1)
        else:
            out.notices.append(
                f"{out.path}: provider_settings.api_key holds a literal key, which freeact-tui never "
                'reads from a file; put it in an environment variable and write api_key = "${VAR}".'
            )
    for other in sorted(set(provider) - {"base_url", "api_key"}):
        out.notices.append(f"{out.path}: provider_settings.{other} is not used by freeact-tui.")


def _map_tools(tools: dict[str, Any], out: FreeactSettings) -> None:
    """freeact's ``[agent.tools]``: the discovery mode; its bundled search/fetch servers have no counterpart."""
    if tools.get("discovery") in ("basic", "hybrid", "off"):
        out.values["tool_discovery"] = tools["discovery"]
    if tools.get("search") or tools.get("fetch"):
        out.notices.append(
            f"{out.path}: freeact's bundled search/fetch tool servers are not part of freeact-tui; "
            "configure an MCP server for them instead."
        )


def _timeout(value: Any) -> float:
    seconds = float(value)
    return seconds if seconds > 0 else _NO_TIMEOUT


def _approval_timeout(value: Any) -> float | None:
    seconds = float(value)
    return seconds if seconds > 0 else None


# freeact's numeric ``[agent]`` keys → the converter to this app's value (0 or less: no limit).
_LIMITS: dict[str, Callable[[Any], Any]] = {
    "execution_timeout": _timeout,
    "approval_timeout": _approval_timeout,
    "tool_result_inline_max_bytes": lambda value: max(256, int(value)),
    "tool_result_preview_chars": lambda value: max(64, int(value)),
}


def _server(spec: dict[str, Any], mode: str, where: str, notices: list[str]) -> dict[str, Any]:
    server: dict[str, Any] = {"mode": mode}
    for key, value in spec.items():
        if key in _SERVER_KEYS:
            server[_SERVER_KEYS[key]] = value
        elif key in _SERVER_RENAMED:
            server[_SERVER_RENAMED[key]] = value
        else:
            notices.append(f"{where}: key {key!r} is not used by freeact-tui.")
    return server


# freeact rule types → this app's rule kinds (a pattern maker for each; ``None``: no counterpart).
_RULE_KINDS = {
    "ShellAction": lambda rule: ("shell", rule.get("command")),
    "CodeAction": lambda rule: ("code", "*"),
    "GenericCall": lambda rule: ("tool", rule.get("tool_name")),
    "FileRead": lambda rule: ("read", f"path:{rule['path']}" if rule.get("path") else None),
    "FileWrite": lambda rule: ("write", f"path:{rule['path']}" if rule.get("path") else None),
    "FileEdit": lambda rule: ("write", f"path:{rule['path']}" if rule.get("path") else None),
}
_FILE_TOOLS = "filesystem_*"
_SHELL_TOOL = "bash"  # freeact's tool name for a ``!cmd`` shell part
# freeact 0.11's default rules, written when this app creates the file (as ``freeact`` itself would);
# they are freeact's, so they are not read back as project rules (this app's defaults are stricter).
_FREEACT_DEFAULT_SHELL = (
    "pwd", "whoami", "id", "id *", "hostname", "uname", "uname *", "date", "uptime", "which *", "whereis *",
    "ls", "ls *", "tree", "tree *", "stat *", "file *", "du *", "df", "df *", "wc *", "cat *", "head *",
    "tail *", "ps", "ps *", "git status", "git status *", "git log", "git log *", "git diff", "git diff *",
    "git show", "git show *", "git blame *", "git ls-files", "git ls-files *", "git ls-tree *",
    "git cat-file *", "git rev-parse *", "git describe", "git describe *", "git shortlog", "git shortlog *",
    "git reflog", "git for-each-ref *", "git symbolic-ref *", "git config --get *", "git config --list",
    "git remote", "git remote -v", "git remote show *", "git tag", "git branch", "git stash list",
    "git stash show *", "git worktree list",
)  # fmt: skip
FREEACT_DEFAULT_RULES: dict[str, list[dict[str, str]]] = {
    "ask": [{"type": "FileRead", "tool_name": _FILE_TOOLS, "path": "**/.env"}],
    "allow": [
        {"type": "FileRead", "tool_name": _FILE_TOOLS, "path": "**"},
        *(
            {"type": "GenericCall", "tool_name": f"pytools_{t}"}
            for t in ("list_categories", "list_tools", "search_tools")
        ),
        *({"type": "ShellAction", "tool_name": _SHELL_TOOL, "command": c} for c in _FREEACT_DEFAULT_SHELL),
    ],
}


def permissions_file(project: Path) -> Path:
    return project / paths.FREEACT_DIR_NAME / PERMISSIONS_FILENAME


def _read_permissions_data(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    return _parse_toml(path, "the freeact permissions file")


def _as_ours(rule: object) -> tuple[str, str] | None:
    if not isinstance(rule, dict) or rule.get("type") not in _RULE_KINDS:
        return None
    kind, pattern = _RULE_KINDS[rule["type"]](rule)
    return (kind, pattern) if isinstance(pattern, str) and pattern.strip() else None


def read_freeact_permissions(project: Path) -> list[tuple[str, str, str]]:
    """The rules of ``<project>/.freeact/permissions.toml`` as ``(effect, kind, pattern)`` of this app.

    freeact's ``ask`` and ``allow`` tiers map to the same effects; a rule type with no counterpart is
    skipped, and so are freeact's own default rules (this app has its own, stricter ones). A file that
    is not TOML is an error (never ignored silently).

    Raises:
        FreeactConfigError: the file cannot be read or is not TOML.
    """
    data = _read_permissions_data(permissions_file(project))
    rules: list[tuple[str, str, str]] = []
    for effect in ("ask", "allow"):
        entries = data.get(effect, [])
        for rule in entries if isinstance(entries, list) else []:
            ours = _as_ours(rule)
            if ours is not None and rule not in FREEACT_DEFAULT_RULES[effect]:
                if (effect, *ours) not in rules:
                    rules.append((effect, *ours))
    return rules


def freeact_rules_for(kind: str, pattern: str) -> list[dict[str, str]] | None:
    """freeact's rules for this app's ``(kind, pattern)``, or ``None`` when freeact cannot hold it."""
    if kind in ("read", "write") and pattern.startswith("path:") and pattern[5:].strip():
        path = pattern[5:]
        types = ("FileRead",) if kind == "read" else ("FileWrite", "FileEdit")
        return [{"type": t, "tool_name": _FILE_TOOLS, "path": path} for t in types]
    if pattern.startswith("path:"):
        return None
    if kind == "shell":
        return [{"type": "ShellAction", "tool_name": _SHELL_TOOL, "command": pattern}]
    if kind == "tool":
        return [{"type": "GenericCall", "tool_name": pattern}]
    return None


def add_freeact_permission(project: Path, effect: str, kind: str, pattern: str) -> bool:
    """Add a rule to ``<project>/.freeact/permissions.toml`` in freeact's format.

    A new file starts with freeact's defaults (as ``freeact`` would write it). Returns ``False`` (and
    writes nothing) when freeact has no such rule: deny rules, exact code cells, MCP calls.

    Raises:
        FreeactConfigError: the file cannot be read or written.
    """
    rules = freeact_rules_for(kind, pattern)
    if rules is None or effect not in ("ask", "allow"):
        return False
    path = permissions_file(project)
    data = (
        _read_permissions_data(path)
        if path.is_file()
        else {k: list(v) for k, v in FREEACT_DEFAULT_RULES.items()}
    )
    tier = data.setdefault(effect, [])
    if not isinstance(tier, list):
        raise FreeactConfigError(f"The freeact permissions file {path}: {effect!r} must be a list of rules.")
    tier += [r for r in rules if r not in tier]
    _write_permissions(path, data)
    return True


def remove_freeact_permission(project: Path, effect: str, kind: str, pattern: str) -> bool:
    """Remove the rules of ``<project>/.freeact/permissions.toml`` that read as ``(effect, kind, pattern)``.

    Raises:
        FreeactConfigError: the file cannot be read or written.
    """
    path = permissions_file(project)
    data = _read_permissions_data(path)
    tier = data.get(effect)
    if not isinstance(tier, list):
        return False
    kept = [r for r in tier if _as_ours(r) != (kind, pattern)]
    if len(kept) == len(tier):
        return False
    data[effect] = kept
    _write_permissions(path, data)
    return True


def _write_permissions(path: Path, data: dict[str, Any]) -> None:
    import tomli_w

    try:
        text = tomli_w.dumps(data)
        paths.atomic_write_text(path, text, mode=0o644)
    except (OSError, TypeError, ValueError) as exc:
        raise FreeactConfigError(f"The freeact permissions file {path} cannot be written: {exc}") from exc
    trust.note_project_write(path, text.encode("utf-8"))
