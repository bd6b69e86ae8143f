"""What a folder's project files would change, described for the user before they trust it.

``review(state)`` reads the project files of an untrusted (or changed) folder the way ``load_config``
would once trusted, without applying anything: the settings they set, every MCP server command in
full, the permission rules, skills, ``AGENTS.md`` and the names (never the values) a ``.env`` sets.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from freeact_tui.project import env_refs, paths, trusted
from freeact_tui.project import files as projectfiles
from freeact_tui.project.config import ConfigError, project_layers
from freeact_tui.project.env_policy import refusal
from freeact_tui.project.freeact_dir import FreeactConfigError, read_freeact_permissions
from freeact_tui.project.generated_layout import is_app_layout
from freeact_tui.project.policy import project_rule_refusal
from freeact_tui.project.trust import GENERATED_DIR, SESSIONS_DIR, FileChange, TrustState
from freeact_tui.reach.breadth import PATH_PREFIX
from freeact_tui.text.safe import visible


@dataclass(frozen=True)
class ProjectReview:
    """The project files of a folder and what they would change, as lines for the user."""

    folder: Path
    changed: bool
    files: list[str] = field(default_factory=list)
    settings: list[str] = field(default_factory=list)
    servers: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    changes: list[FileChange] = field(default_factory=list)

    def text(self) -> str:
        """The review as plain text (control characters made visible)."""
        parts: list[str] = []
        if self.changes:
            lines = []
            for change in self.changes:
                lines.append(f"{change.kind}: {change.label}")
                if change.diff:
                    lines.append(change.diff.rstrip("\n"))
            parts.append("Changed since you trusted this folder:\n" + "\n".join(lines))
        parts.append("Project files:\n" + "\n".join(f"  {f}" for f in self.files))
        if self.servers:
            parts.append("MCP servers it would start:\n" + "\n".join(f"  {s}" for s in self.servers))
        if self.rules:
            parts.append("Permission rules it would add:\n" + "\n".join(f"  {r}" for r in self.rules))
        if self.settings:
            parts.append("Settings it would change:\n" + "\n".join(f"  {s}" for s in self.settings))
        if self.refused:
            parts.append("Never applied, even if trusted:\n" + "\n".join(f"  {r}" for r in self.refused))
        return visible("\n\n".join(parts))


def _server_line(name: str, spec: dict[str, Any]) -> str:
    if spec.get("url"):
        headers = ", ".join(sorted(spec.get("headers") or {}))
        return f"{name}: {spec['url']}" + (f" (headers: {headers})" if headers else "")
    argv = [str(spec.get("command", "")), *(str(a) for a in spec.get("args") or [])]
    env = " ".join(f"{k}={v}" for k, v in (spec.get("env") or {}).items())
    return f"{name}: {(env + ' ') if env else ''}{shlex.join(argv)}"


_NAMED = 12  # file names a directory's line shows before "and N more"


def _names(listing: list[str]) -> str:
    if not listing:
        return "none"
    more = len(listing) - _NAMED
    return ", ".join(listing[:_NAMED]) + (f" and {more} more" if more > 0 else "")


def _not_a_file(path: Path) -> str | None:
    """What stands at ``path`` when it is not a regular file a project file could be read from."""
    try:
        what = projectfiles.kind(path.stat().st_mode)
    except OSError:
        return "unreadable"
    if what is None and path.stat().st_size > projectfiles.MAX_PROJECT_FILE:
        return f"{path.stat().st_size:,} bytes, more than a project file may hold"
    return None if what is None else f"{what}, not a regular file"


def _describe(label: str, path: Path, outside: tuple[str, ...] = (), listing: list[str] | None = None) -> str:
    if outside:
        links = "; ".join(outside)
        return f"{_describe(label, path, (), listing)} — LINKS OUT OF THE FOLDER: {links}"
    listing = listing or []
    if not label.endswith("/") and (what := _not_a_file(path)) is not None:
        return f"{label} — {what}: never read"
    if label.endswith("/"):
        if path.name == "skills":
            count = len(list(path.glob("*/SKILL.md")))
            return f"{label} — {count} skill{'s' if count != 1 else ''} the model is told about"
        if path.name == SESSIONS_DIR:
            count = len({line.split("/", 1)[0] for line in listing})
            return f"{label} — {count} stored session{'s' if count != 1 else ''} (resumable once trusted)"
        if path.name == GENERATED_DIR:
            ours = [rel for rel in listing if is_app_layout(rel)]
            foreign = [rel for rel in listing if not is_app_layout(rel)]
            line = f"{label} — Python code the kernel imports (saved tools, generated APIs): {_names(ours)}"
            if foreign:  # each named: one summarised "and N more" could hide a sitecustomize.py
                line += f"; NOT FILES THE APP GENERATES: {', '.join(foreign)}"
            return line
        return f"{label} — other files: {_names(listing)}"
    if path.name == "AGENTS.md":
        return f"{label} — instructions added to the model's system prompt"
    if path.name == ".env":
        try:
            raw = trusted.read_env(path)
            # a value naming another variable is shown as written: what it reads is the user's to see
            names = ", ".join(
                f"{name} = {value!r}" if value and env_refs.references(value) else name
                for name, value in sorted(raw.items())
            ) or "nothing"
        except (OSError, UnicodeDecodeError):
            names = "unreadable"
        return f"{label} — environment variables: {names}"
    if path.name == "permissions.toml":
        return f"{label} — permission rules"
    return f"{label} — settings"


def _refused_env(state: TrustState) -> list[str]:
    """The variables of the project's ``.env`` that are never set (``env_policy``; ``env_refs``: it reads the
    user's environment, shown with its value as written), each with why."""
    lines: list[str] = []
    for file in state.files:
        if file.path.name != ".env":
            continue
        try:
            raw = trusted.read_env(file.path)
        except (OSError, UnicodeDecodeError):
            continue
        _, reading = env_refs.resolve_env_file(raw)
        for name in sorted(raw):
            if (reason := refusal(name)) is not None:
                lines.append(f"{file.label}: {name} — {reason}")
            elif name in reading:  # shown as written: what it would have read is the user's to see
                lines.append(f"{file.label}: {name} = {raw[name]!r} — {reading[name]}")
    return lines


_ALLOWS: dict[str, str] = {
    "read": "lets the model read {what} without asking",
    "write": (
        "lets the model write {what} without asking (Python there is ordinary project code: nothing the app "
        "starts imports it, and a cell or command that runs it is asked)"
    ),
    "shell": "lets the model run {what} without asking",
    "mcp": "lets the model call the MCP tool {what} without asking",
    "tool": "lets the model call the tool {what} without asking",
    "subagent": "lets the model start the subagent task {what} without asking",
    "*": "lets the model do {what} without asking",
}
"""What a project's allow rule lets the model do, per kind, as the trust dialog says it (#39): a write rule
such as ``src/**`` lets the model write Python there, which only runs when a cell or a command the user
approves runs it (the kernel's folder imports are judged as running folder code; no process the app starts
has the folder on its path; the names that configure code run later are refused by ``project_path_refusal``)."""


def rule_line(effect: str, kind: str, pattern: str) -> str:
    """A project rule as the trust dialog lists it: the rule, and what it lets the model do unasked."""
    what = pattern.strip()
    if what.startswith(PATH_PREFIX):
        what = f"the files {what[len(PATH_PREFIX) :].strip()}"
    if effect == "allow" and kind in _ALLOWS:
        return f"{effect} {kind}: {pattern} — {_ALLOWS[kind].format(what=what)}"
    if effect == "ask":
        return f"{effect} {kind}: {pattern} — asks you first"
    return f"{effect} {kind}: {pattern}"


def review(state: TrustState) -> ProjectReview:
    """What ``state.folder``'s project files would change if trusted (nothing is applied), from the bytes
    the trust check read (``trusted.reviewing``): a file changed since is named as not read."""
    with trusted.reviewing():
        return _review(state)


def _review(state: TrustState) -> ProjectReview:
    files = [_describe(f.label, f.path, f.outside, (f.text or "").splitlines()) for f in state.files]
    settings: list[str] = []
    servers: list[str] = []
    rules: list[str] = []
    refused: list[str] = []
    try:
        for source, layer in project_layers(state.folder, refused):
            name = Path(source).name if Path(source).parent == state.folder else source
            for key, value in layer.items():
                if key == "mcp_servers" and isinstance(value, dict):
                    servers += [_server_line(n, s) for n, s in value.items() if isinstance(s, dict)]
                else:
                    settings.append(f"{name}: {key} = {value!r}")
    except ConfigError as exc:
        refused.append(f"cannot be read: {exc}")
    refused += _refused_env(state)
    project = paths.find_freeact_project(state.folder)
    if project is not None:
        try:
            for effect, kind, pattern in read_freeact_permissions(project):
                why = project_rule_refusal(effect, kind, pattern)
                if why is None:
                    rules.append(rule_line(effect, kind, pattern))
                else:
                    refused.append(f"{effect} {kind}: {pattern} ({why})")
        except FreeactConfigError as exc:
            refused.append(str(exc))
    return ProjectReview(
        state.folder, state.status == "changed", files, settings, servers, rules, refused, state.changes
    )
