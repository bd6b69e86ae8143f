"""freeact 0.11's ``PermissionManager``: typed pattern rules in ``.freeact/permissions.toml``.

Rules match a call's type and fields with globs (paths: ``*`` within a directory, ``**`` across);
ask rules win over allow rules; "always" rules persist, "session" rules do not. The file format is
freeact's, so both read and write the same file.
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from freeact_tui.freeact.toolcalls import (
    CodeAction,
    FileEdit,
    FileRead,
    FileWrite,
    GenericCall,
    ShellAction,
    ToolCall,
)
from freeact_tui.project import trust, trusted
from freeact_tui.reach.globs import normalize_path, path_regex
from freeact_tui.reach.resolve import resolve, root_of, subject

_TYPES: dict[str, type[ToolCall]] = {
    "GenericCall": GenericCall,
    "ShellAction": ShellAction,
    "CodeAction": CodeAction,
    "FileRead": FileRead,
    "FileWrite": FileWrite,
    "FileEdit": FileEdit,
}
_READ_ONLY_COMMANDS = (
    "pwd", "whoami", "id", "id *", "hostname", "uname", "uname *", "date", "uptime", "which *", "whereis *",
    "ls", "ls *", "tree", "tree *", "stat *", "file *", "du *", "df", "df *", "wc *", "cat *", "head *",
    "tail *", "ps", "ps *", "git status", "git status *", "git log", "git log *", "git diff", "git diff *",
    "git show", "git show *", "git blame *", "git ls-files", "git ls-files *", "git rev-parse *",
    "git describe", "git describe *", "git branch", "git tag", "git remote -v", "git stash list",
)  # fmt: skip


@dataclass(frozen=True)
class PermissionRule:
    """One rule: the call type, a tool name glob, and a command or path glob where the type has one."""

    type: str
    tool_name: str
    command: str | None = None
    path: str | None = None

    def matches(self, call: ToolCall, working_dir: Path, *, every: bool = False) -> bool:
        """Whether this rule matches ``call``; a path matches as written or where it really leads
        (``pathresolve``): either for an ask rule, both (``every``) for an allow rule."""
        if type(call) is not _TYPES.get(self.type) or not fnmatchcase(call.tool_name, self.tool_name):
            return False
        if isinstance(call, ShellAction):
            return self.command is not None and fnmatchcase(call.command, self.command)
        if isinstance(call, FileRead | FileWrite | FileEdit):
            if not self.path:
                return False
            hits = [
                # a relative pattern never matches a path outside the working dir
                self.path.startswith("/") == subject.startswith("/")
                and path_regex(self.path).fullmatch(subject) is not None
                for subject in _subjects(call.path, working_dir)
            ]
            return all(hits) if every else any(hits)
        return True

    def to_toml(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def _subjects(path: str, working_dir: Path) -> list[str]:
    """A file call's path as written and where it really leads (an unresolvable one counts as outside)."""
    where = resolve(path, working_dir)
    real = subject(where.path, root_of(working_dir)) if where.certain else where.path
    return list(dict.fromkeys([normalize_path(path, working_dir), real]))


def rule_from_call(call: ToolCall) -> PermissionRule:
    """The rule a (possibly wildcarded) call describes."""
    name = type(call).__name__
    if isinstance(call, ShellAction):
        return PermissionRule(name, call.tool_name, command=call.command)
    if isinstance(call, FileRead | FileWrite | FileEdit):
        return PermissionRule(name, call.tool_name, path=call.path)
    return PermissionRule(name, call.tool_name)


def _defaults() -> tuple[list[PermissionRule], list[PermissionRule]]:
    ask = [
        PermissionRule("FileRead", "filesystem_*", path="**/.env"),
        PermissionRule("FileRead", "*", path=".env"),
    ]
    allow = [PermissionRule("FileRead", "*", path="**")]
    allow += [
        PermissionRule("GenericCall", f"pytools_{t}")
        for t in ("list_categories", "list_tools", "search_tools")
    ]
    allow += [PermissionRule("ShellAction", "*", command=c) for c in _READ_ONLY_COMMANDS]
    return ask, allow


class PermissionManager:
    """Pre-approval of tool calls by typed pattern rules (freeact's API and file).

    Args:
        working_dir: Relative path patterns refer to it (default: the current directory).
        freeact_dir: Where ``permissions.toml`` lives (default: ``.freeact``).
    """

    def __init__(self, working_dir: Path | None = None, freeact_dir: Path = Path(".freeact")) -> None:
        self._freeact_dir = freeact_dir.resolve()
        self._file = self._freeact_dir / "permissions.toml"
        self._working_dir = (working_dir or Path.cwd()).resolve()
        self._ask, self._allow = _defaults()
        self._session_allow: list[PermissionRule] = []

    @property
    def permissions_file(self) -> Path:
        return self._file

    def init(self) -> None:
        """Load the file when present, otherwise write the defaults to it."""
        if self._file.exists():
            self.load()
        else:
            self.save()

    def load(self) -> None:
        """Read ``permissions.toml``.

        Raises:
            ValueError: the file is not TOML or holds an unknown rule type (names the file).
        """
        if not self._file.exists():
            return
        try:
            data = tomllib.loads(trusted.read_text(self._file))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
            raise ValueError(f"{self._file}: not valid TOML ({exc})") from None
        except RecursionError:
            raise ValueError(f"{self._file}: nests tables or arrays too deeply") from None
        rules: dict[str, list[PermissionRule]] = {"ask": [], "allow": []}
        for tier in rules:
            for entry in data.get(tier, []):
                if not isinstance(entry, dict) or entry.get("type") not in _TYPES or "tool_name" not in entry:
                    raise ValueError(f"{self._file}: {tier} rule {entry!r} is not a known rule")
                rules[tier].append(
                    PermissionRule(entry["type"], entry["tool_name"], entry.get("command"), entry.get("path"))
                )
        self._ask, self._allow = rules["ask"], rules["allow"]

    def save(self) -> None:
        """Write the "always" rules to ``permissions.toml``."""
        import tomli_w

        self._freeact_dir.mkdir(parents=True, exist_ok=True)
        data = {"ask": [r.to_toml() for r in self._ask], "allow": [r.to_toml() for r in self._allow]}
        text = tomli_w.dumps(data)
        self._file.write_text(text, encoding="utf-8")
        trust.note_project_write(self._file, text.encode("utf-8"))  # the app's own write: no change of the project

    def is_allowed(self, tool_call: ToolCall) -> bool:
        """Whether a concrete call is pre-approved (an allow rule matches and no ask rule does)."""
        if any(rule.matches(tool_call, self._working_dir) for rule in self._ask):
            return False
        return any(
            rule.matches(tool_call, self._working_dir, every=True)
            for rule in (*self._session_allow, *self._allow)
        )

    def allow_always(self, tool_call: ToolCall) -> None:
        """Allow calls like this one (fields may hold globs) from now on, and save."""
        rule = rule_from_call(tool_call)
        if rule not in self._allow:
            self._allow.append(rule)
        self.save()

    def allow_session(self, tool_call: ToolCall) -> None:
        """Allow calls like this one until the process ends."""
        rule = rule_from_call(tool_call)
        if rule not in self._session_allow:
            self._session_allow.append(rule)
