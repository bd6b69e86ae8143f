"""Permission rules: which actions run without asking, which always ask, and which never run.

A rule is ``(kind, pattern)``. ``kind`` is a tool call's kind (``code``, ``shell``, ``script``,
``mcp``, ``tool``, ``subagent``; ``read`` and ``write`` for the file tools) or ``*`` for any.
``pattern`` is matched fnmatch-style against the call's ``subject`` (a command, ``server.tool``,
a tool name, a file tool's path, a code action's text; a pattern equal to the subject matches too);
``"git status *"`` also matches the bare
``git status``. A pattern starting with ``path:`` matches the call's path arguments instead: ``**``
crosses ``/``, ``*`` and ``?`` do not, and relative patterns match paths inside the working directory.

Shell wildcards never match a command with command or process substitution, a ``$VAR`` expansion
(IPython fills ``$name`` from Python variables after approval), a redirection into a file, several
commands or an unbalanced quote: only a rule spelling out the exact command allows those. The
built-in defaults (read-only commands) also refuse flags that write or run something.

Three effects: ``deny`` refuses the action without asking (even with ``--skip-permissions``), ``ask``
forces a question, ``allow`` runs it. Precedence: deny (session, always), then ask (session, always,
default), then allow (session, always, default): deny beats allow, an explicit ask rule beats allow
(secrets keep asking), and no match means ask. A deny rule matches as broadly as an ask rule: any
path argument it names, and shell wildcards also match commands with substitutions or redirections.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Literal

from freeact_tui.pathglobs import (
    code_strings,
    expand_path,
    glob_matches,
    json_path_values,
    path_regex,
    shell_path_words,
)
from freeact_tui.paths import atomic_write_text
from freeact_tui.shellwords import CommandTraits, command_words, inspect_command, split_command
from freeact_tui.toolcalls import (
    CodeAction,
    FileCall,
    JsonToolCall,
    ProgrammaticToolCall,
    ShellAction,
    ShellScript,
    ToolCall,
)

Effect = Literal["allow", "ask", "deny"]
Scope = Literal["always", "session"]
RuleScope = Literal["session", "always", "default"]

KINDS = ("code", "shell", "script", "mcp", "tool", "subagent", "read", "write")
PATH_PREFIX = "path:"
_EFFECTS: tuple[Effect, ...] = ("allow", "ask", "deny")
# Argument names of MCP / JSON tools whose values are paths.


class PermissionsFileError(Exception):
    """The permissions file cannot be read or is malformed; ``str(error)`` names the file."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"permissions file {path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True)
class Rule:
    """A pattern for the calls of one kind (``*``: any kind)."""

    kind: str
    pattern: str


@dataclass(frozen=True)
class RuleEntry:
    """A rule as listed for display, with its effect and where it lives."""

    kind: str
    pattern: str
    effect: Effect
    scope: RuleScope


# Read-only commands allowed by default; ``X *`` also allows bare ``X``.
_DEFAULT_SHELL_ALLOW = (
    "pwd", "whoami", "id *", "hostname", "uname *", "date *", "uptime", "which *", "whereis *", "type *",
    "ls *", "tree *", "stat *", "file *", "du *", "df *", "wc *", "cat *", "head *", "tail *", "nl *",
    "echo *", "printf *", "grep *", "egrep *", "fgrep *", "rg *", "find *", "sort *", "cut *", "diff *",
    "basename *", "dirname *", "realpath *", "readlink *",
    "git status *", "git log *", "git diff *", "git show *", "git blame *", "git ls-files *",
    "git rev-parse *", "git describe *", "git shortlog *", "git remote -v", "git tag", "git stash list",
    "git branch", "git branch -a", "git branch -r", "git branch -v", "git branch -vv", "git branch -av",
    "git branch --all", "git branch --list", "git branch --show-current",
    "python --version", "python3 --version", "python -V", "python3 -V",
    "pip --version", "pip list *", "pip show *", "pip freeze",
)  # fmt: skip
# Flags that make an otherwise read-only program write or run something: (long words, short letters).
# Recursive reads (grep -r, rg --hidden, diff -r) would show a .env file the ask rules never see.
_GREP_RECURSIVE = (frozenset({"--recursive", "--dereference-recursive", "--directories", "-d"}), "rRd")
_DEFAULT_FORBIDDEN: dict[str, tuple[frozenset[str], str]] = {
    "find": (frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0",
                        "-fprintf", "-fls"}), ""),
    "grep": _GREP_RECURSIVE, "egrep": _GREP_RECURSIVE, "fgrep": _GREP_RECURSIVE,
    "rg": (frozenset({"--pre", "--hidden", "--unrestricted", "--no-ignore"}), "u."),
    "diff": (frozenset({"--recursive"}), "r"),
    "sort": (frozenset({"--output", "--compress-program"}), "o"),
    "tree": (frozenset(), "o"),
    "date": (frozenset({"--set"}), "s"),
    "file": (frozenset({"--compile"}), "C"),
    "git": (frozenset({"--output"}), ""),
}  # fmt: skip
# Secrets ask everywhere (inside the working dir and out), whatever allows the call.
_SECRETS = (".env", ".env.*", ".ssh/**", ".aws/**", ".netrc", ".pgpass", ".git-credentials", "*.pem", "*.key")
_DEFAULTS: dict[Effect, tuple[Rule, ...]] = {
    "deny": (),
    "ask": tuple(Rule("*", PATH_PREFIX + root + p) for root in ("**/", "/**/") for p in _SECRETS),
    # File tools: reads inside the working directory (symlinks followed) run without asking.
    # Tool discovery only lists the generated tools (freeact allows it by default too).
    "allow": (
        *(Rule("shell", p) for p in _DEFAULT_SHELL_ALLOW),
        Rule("read", PATH_PREFIX + "**"),
        *(Rule("tool", name) for name in ("pytools_list_categories", "pytools_list_tools", "pytools_search_tools")),
    ),
}
_PRECEDENCE: tuple[Effect, ...] = ("deny", "ask", "allow")
# Strictest first: the effect of a composite shell command is the strictest of its parts.
_STRICTNESS: dict[Effect, int] = {"deny": 2, "ask": 1, "allow": 0}


class _Facts:
    """What rules look at in one call, computed once however many rules are tried."""

    def __init__(self, call: ToolCall, working_dir: Path) -> None:
        self.call = call
        self.working_dir = working_dir

    @cached_property
    def paths(self) -> list[str]:
        match self.call:
            case ShellAction(command=text) | ShellScript(script=text):
                raw = [w for part in split_command(text) for w in shell_path_words(part)]
            case ProgrammaticToolCall(args=args) | JsonToolCall(tool_args=args):
                raw = json_path_values(args)
            case CodeAction(code=code):
                raw = code_strings(code)
            case FileCall():
                raw = self.call.paths
            case _:
                raw = []
        return [p for r in raw for p in expand_path(r, self.working_dir)]

    @cached_property
    def traits(self) -> CommandTraits:
        return inspect_command(self.call.subject)

    @cached_property
    def default_safe(self) -> bool:
        words = command_words(self.call.subject)
        if not words or words[0] not in _DEFAULT_FORBIDDEN:
            return bool(words)
        long_flags, letters = _DEFAULT_FORBIDDEN[words[0]]
        for w in words[1:]:
            if w.split("=", 1)[0] in long_flags:
                return False
            if letters and w.startswith("-") and not w.startswith("--") and set(w[1:]) & set(letters):
                return False
        return True


def _rule_matches(entry: RuleEntry, facts: _Facts) -> bool:
    call = facts.call
    if entry.kind not in ("*", call.kind):
        return False
    if entry.pattern.startswith(PATH_PREFIX):
        pattern = os.path.expanduser(entry.pattern[len(PATH_PREFIX) :])
        regex, absolute = path_regex(pattern), pattern.startswith("/")
        # A relative pattern never matches a path outside the working dir, however broad it is.
        hits = [p.startswith("/") == absolute and regex.fullmatch(p) is not None for p in facts.paths]
        return any(hits) if entry.effect != "allow" else bool(hits) and all(hits)
    if not isinstance(call, ShellAction):
        # Spelled out in full (a one-line code action), glob characters and all, or a glob.
        return entry.pattern == call.subject or glob_matches(entry.pattern, call.subject)
    if entry.pattern == call.command:
        return True  # spelled out in full: the user has seen exactly this command
    if entry.effect == "deny":
        return glob_matches(entry.pattern, call.command)  # refusing is safe whatever the command hides
    if not facts.traits.simple or (entry.scope == "default" and not facts.default_safe):
        return False
    return glob_matches(entry.pattern, call.command)


def _no_rules() -> dict[Effect, list[Rule]]:
    return {effect: [] for effect in _EFFECTS}


def _parse(path: Path, text: str) -> dict[Effect, list[Rule]]:
    if not text.strip():
        return _no_rules()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise PermissionsFileError(path, f"not valid JSON ({e})") from e
    if not isinstance(data, dict):
        raise PermissionsFileError(
            path, 'expected an object like {"allow": [...], "ask": [...], "deny": [...]}'
        )
    unknown = sorted(set(data) - set(_EFFECTS))
    if unknown:
        raise PermissionsFileError(path, f"unknown key {unknown[0]!r} (expected 'allow', 'ask' and 'deny')")
    result = _no_rules()
    for effect in _EFFECTS:
        entries = data.get(effect, [])
        if not isinstance(entries, list):
            raise PermissionsFileError(path, f"{effect!r} must be a list of rules")
        for k, entry in enumerate(entries, 1):
            where = f"rule {k} of {effect!r}"
            if not isinstance(entry, dict) or set(entry) != {"kind", "pattern"}:
                raise PermissionsFileError(path, f'{where}: expected {{"kind": ..., "pattern": ...}}')
            try:
                rule = _make_rule(entry["kind"], entry["pattern"])
            except ValueError as e:
                raise PermissionsFileError(path, f"{where}: {e}") from e
            if rule not in result[effect]:
                result[effect].append(rule)
    return result


def _make_rule(kind: object, pattern: object) -> Rule:
    if not isinstance(kind, str) or kind not in (*KINDS, "*"):
        raise ValueError(f"unknown kind {kind!r} (one of {', '.join(KINDS)}, or *)")
    if not isinstance(pattern, str) or not pattern.strip():
        raise ValueError("the pattern must be a non-empty string")
    return Rule(kind, pattern)


class PermissionRules:
    """Rules that pre-approve actions, force a question or refuse them, in "always" and "session" scope.

    Args:
        path: JSON file of the "always" rules (read now if it exists); ``None`` keeps them in memory.
        skip_permissions: allow every action no deny rule refuses (``--skip-permissions``).
        defaults: apply the built-in read-only allow-list and the ``.env`` ask rules.
        working_dir: directory relative path patterns refer to (default: the current directory).

    Raises:
        PermissionsFileError: the file exists but cannot be read or is malformed.
    """

    def __init__(
        self,
        path: Path | None = None,
        *,
        skip_permissions: bool = False,
        defaults: bool = True,
        working_dir: Path | None = None,
    ) -> None:
        self.path = path
        self.skip_permissions = skip_permissions
        self.defaults = defaults
        self.working_dir = Path(os.path.abspath(working_dir or Path.cwd()))
        self._session: dict[Effect, list[Rule]] = _no_rules()
        self._always: dict[Effect, list[Rule]] = self._read() if path else _no_rules()

    @classmethod
    def load(
        cls,
        path: Path,
        *,
        skip_permissions: bool = False,
        defaults: bool = True,
        working_dir: Path | None = None,
    ) -> PermissionRules:
        """Rules with the "always" scope read from ``path`` (a missing file means none yet).

        Raises:
            PermissionsFileError: the file cannot be read or is malformed; it is left untouched.
        """
        return cls(path, skip_permissions=skip_permissions, defaults=defaults, working_dir=working_dir)

    def check(self, call: ToolCall) -> Effect:
        """Decide whether ``call`` may run without asking, needs a question, or is refused.

        A composite shell command is allowed only when every part is allowed, and refused when
        any part is refused.

        Args:
            call: The action.

        Returns:
            ``"allow"``, ``"ask"`` or ``"deny"``.
        """
        entry = self.matching_rule(call)
        effect: Effect = entry.effect if entry else "ask"
        if self.skip_permissions and effect != "deny":
            return "allow"
        return effect

    def matching_rule(self, call: ToolCall) -> RuleEntry | None:
        """The rule that decides ``call`` (the first in precedence order that matches), if any.

        For a composite shell command: the rule of its strictest part (``None`` if a part matches none
        and no other part is denied).
        """
        if isinstance(call, ShellAction):
            parts = split_command(call.command)
            if not parts:
                return None
            if len(parts) > 1:
                found = [self.matching_rule(ShellAction(p, full_command=call.full_command)) for p in parts]
                denied = [e for e in found if e is not None and e.effect == "deny"]
                if denied:
                    return denied[0]
                if any(e is None for e in found):
                    return None
                return max(found, key=lambda e: _STRICTNESS[e.effect] if e else -1)
            call = ShellAction(parts[0], full_command=call.full_command)
        facts = _Facts(call, self.working_dir)
        return next((entry for entry in self.rules() if _rule_matches(entry, facts)), None)

    def add(self, call_kind: str, pattern: str, *, scope: Scope, effect: Effect = "allow") -> None:
        """Add a rule; an "always" rule is written to the file before it takes effect.

        Args:
            call_kind: A tool call kind or ``*``.
            pattern: See the module docstring.
            scope: ``"always"`` (persisted) or ``"session"`` (this process only).
            effect: ``"allow"``, ``"ask"`` or ``"deny"``.

        Raises:
            ValueError: unknown kind, scope or effect, or an empty pattern.
            PermissionsFileError: the file is broken or cannot be written (the rule is not added).
        """
        rule = self._validate(call_kind, pattern, scope, effect)
        if scope == "session":
            if rule not in self._session[effect]:
                self._session[effect].append(rule)
            return
        # Re-read first so that rules another instance saved meanwhile are kept.
        rules = self._read() if self.path else {e: list(r) for e, r in self._always.items()}
        if rule not in rules[effect]:
            rules[effect].append(rule)
            if self.path:
                data = {
                    e: [{"kind": r.kind, "pattern": r.pattern} for r in rules[e]]
                    for e in _EFFECTS
                    if e != "deny" or rules[e]  # files without deny rules keep their old shape
                }
                try:
                    atomic_write_text(self.path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
                except OSError as e:
                    raise PermissionsFileError(self.path, f"cannot be written ({e})") from e
        self._always = rules

    def rules(self) -> list[RuleEntry]:
        """Every rule in precedence order (denies first, then asks), for display."""
        out: list[RuleEntry] = []
        for effect in _PRECEDENCE:
            out += [RuleEntry(r.kind, r.pattern, effect, "session") for r in self._session[effect]]
            out += [RuleEntry(r.kind, r.pattern, effect, "always") for r in self._always[effect]]
            if self.defaults:
                out += [RuleEntry(r.kind, r.pattern, effect, "default") for r in _DEFAULTS[effect]]
        return out

    def _validate(self, kind: str, pattern: str, scope: str, effect: str) -> Rule:
        if scope not in ("always", "session"):
            raise ValueError(f"unknown scope {scope!r} (always or session)")
        if effect not in _EFFECTS:
            raise ValueError(f"unknown effect {effect!r} (allow, ask or deny)")
        return _make_rule(kind, pattern)

    def _read(self) -> dict[Effect, list[Rule]]:
        assert self.path is not None
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return _no_rules()
        except (OSError, UnicodeDecodeError) as e:
            raise PermissionsFileError(self.path, f"cannot be read ({e})") from e
        return _parse(self.path, text)
