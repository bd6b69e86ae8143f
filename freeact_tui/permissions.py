"""Permission rules: which actions run without asking, which always ask, and which never run.

A rule is ``(kind, pattern)``. ``kind`` is a tool call's kind (``code``, ``shell``, ``script``,
``mcp``, ``tool``, ``subagent``; ``read`` and ``write`` for the file tools) or ``*`` for any.
``pattern`` is matched fnmatch-style against the call's ``subject`` (a command, ``server.tool``,
a tool name, a file tool's path, a code action's text; a pattern equal to the subject matches too);
``"git status *"`` also matches the bare
``git status``. A pattern starting with ``path:`` matches the call's path arguments instead: ``**``
crosses ``/``, ``*`` and ``?`` do not, and relative patterns match paths inside the working directory.

Shell wildcards never match a command with command or process substitution, a ``$VAR`` expansion,
a redirection into a file, several commands or an unbalanced quote: only a rule spelling out the
exact command allows those. No allow rule lets a read-only program write or run something through
its flags (``find -exec``, ``sed e``, ``awk system()``) unless its pattern names that flag; the
built-in defaults also allow only paths inside the working directory. Deny and ask rules match the
program that runs, however it is spelled (``/bin/rm``, ``\\rm``, ``'rm'``, ``command``/``env``/
``exec``/``sudo``/``xargs`` wrappers, ``find -exec``/``-delete``, substitutions).

A code (or script) rule ``cell:<fingerprint>`` matches one exact cell (``freeact_tui.cellrules``);
other code patterns match the cell's text and are broad.

Rules live in the session, the user's file, a freeact project's ``.freeact/permissions.toml`` (freeact's
format; an "always" rule freeact can hold is saved there) and the built-in defaults.

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

from freeact_tui import paths
from freeact_tui.cellrules import cell_matches, is_cell_pattern
from freeact_tui.freeact_project import (
    FreeactConfigError,
    add_freeact_permission,
    read_freeact_permissions,
    remove_freeact_permission,
)
from freeact_tui.pathglobs import (
    code_strings,
    expand_path,
    glob_matches,
    json_path_values,
    path_regex,
    shell_path_words,
)
from freeact_tui.paths import atomic_write_text
from freeact_tui.shellprograms import program_name, run_commands, unsafe_use
from freeact_tui.shellwords import (
    CommandTraits,
    command_words,
    inner_commands,
    inspect_command,
    split_command,
)
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
RuleScope = Literal["session", "always", "project", "default"]
"""Where a rule lives: this process, the user's file, the freeact project file, or built in."""

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

    @property
    def broad(self) -> bool:
        """An allow rule on code or scripts that is not an exact cell: any code may follow what it names."""
        if self.effect != "allow" or is_cell_pattern(self.pattern) or self.pattern.startswith(PATH_PREFIX):
            return False
        return self.kind in ("code", "script", "*")


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
# Secrets ask everywhere (inside the working dir and out), whatever allows the call: keys, tokens in
# tool config dirs, and shell/REPL histories (they hold pasted secrets).
_SECRETS = (
    ".env", ".env.*", ".ssh/**", ".aws/**", ".netrc", ".pgpass", ".git-credentials", "*.pem", "*.key",
    ".npmrc", ".pypirc", ".docker/config.json", ".kube/config", ".vault-token",
    ".bash_history", ".zsh_history", ".zhistory", ".sh_history", ".python_history", ".node_repl_history",
    ".psql_history", ".mysql_history", ".sqlite_history", ".lesshst", ".viminfo",
)  # fmt: skip
# Tool config dirs under home only (a project's own ``.docker/`` or ``.config/`` holds no login).
_HOME_SECRETS = (
    ".config/gh/**", ".config/hub", ".config/gcloud/**", ".config/git/credentials", ".docker/**", ".kube/**",
    ".gnupg/**", ".azure/**", ".terraform.d/**", ".cargo/credentials*", ".gem/credentials", ".m2/settings*.xml",
    ".ipython/**", ".local/share/fish/**", ".history",
)  # fmt: skip
# A process's environment, memory and command line (``/proc/*/environ`` holds this app's API keys).
_SYSTEM_SECRETS = ("/proc", "/proc/**")
# Redirect targets that are not files.
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin"})
_DEFAULTS: dict[Effect, tuple[Rule, ...]] = {
    "deny": (),
    "ask": (
        *(Rule("*", PATH_PREFIX + root + p) for root in ("**/", "/**/") for p in _SECRETS),
        *(Rule("*", PATH_PREFIX + "~/" + p) for p in _HOME_SECRETS),
        *(Rule("*", PATH_PREFIX + p) for p in _SYSTEM_SECRETS),
    ),
    # File tools: reads inside the working directory (symlinks followed) run without asking.
    "allow": (*(Rule("shell", p) for p in _DEFAULT_SHELL_ALLOW), Rule("read", PATH_PREFIX + "**")),
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
    def programs(self) -> list[str]:
        """What the command runs, each program by name: its wrappers, what they run, its substitutions."""
        found = run_commands(self.call.subject)
        for inner in inner_commands(self.call.subject):
            found += run_commands(inner)
        return [" ".join(words) for words in found]

    @cached_property
    def unsafe(self) -> list[str]:
        """The flags (or script pieces) by which a program of this command writes or runs something."""
        return [u for words in run_commands(self.call.subject) if (u := unsafe_use(words)) is not None]

    @cached_property
    def outside(self) -> bool:
        """The command names a path outside the working directory (or reaches one through a symlink)."""
        return any(p.startswith("/") and p not in _NOT_FILES for p in self.paths)


def _program_pattern(pattern: str) -> str:
    """A shell pattern with its program by name (``/bin/rm *`` is ``rm *``)."""
    head, sep, rest = pattern.partition(" ")
    return program_name(head) + sep + rest if "/" in head and not any(c in head for c in "*?[") else pattern


def _names_flag(pattern: str, unsafe: list[str]) -> bool:
    """The pattern itself spells out every risky flag: the user allowed exactly that."""
    words = set(command_words(pattern))
    return all(u in words for u in unsafe)


def _rule_matches(entry: RuleEntry, facts: _Facts) -> bool:
    call = facts.call
    if entry.kind not in ("*", call.kind):
        return False
    if entry.pattern.startswith(PATH_PREFIX):
        pattern = os.path.expanduser(entry.pattern[len(PATH_PREFIX) :])
        regex, absolute = path_regex(pattern), pattern.startswith("/")
        if entry.effect != "allow":
            # Asking or refusing: an absolute pattern also sees paths inside the working dir in full.
            full = [p if p.startswith("/") else f"{facts.working_dir.as_posix()}/{p}" for p in facts.paths]
            return any(
                regex.fullmatch(f if absolute else p) is not None and (absolute or not p.startswith("/"))
                for p, f in zip(facts.paths, full, strict=True)
            )
        # A relative pattern never matches a path outside the working dir, however broad it is.
        hits = [p.startswith("/") == absolute and regex.fullmatch(p) is not None for p in facts.paths]
        return bool(hits) and all(hits)
    if is_cell_pattern(entry.pattern):
        return isinstance(call, CodeAction | ShellScript) and cell_matches(entry.pattern, call.subject)
    if not isinstance(call, ShellAction):
        # Spelled out in full (a one-line code action), glob characters and all, or a glob.
        return entry.pattern == call.subject or glob_matches(entry.pattern, call.subject)
    if entry.pattern == call.command:
        return True  # spelled out in full: the user has seen exactly this command
    if entry.effect != "allow":
        # Refusing or asking is safe whatever the command hides: match the program, not its spelling.
        pattern = _program_pattern(entry.pattern)
        return glob_matches(entry.pattern, call.command) or any(
            glob_matches(pattern, p) for p in facts.programs
        )
    if not facts.traits.simple:
        return False
    if facts.unsafe and not _names_flag(entry.pattern, facts.unsafe):
        return False
    if entry.scope == "default" and facts.outside:
        return False  # the built-in read-only commands read inside the working directory only
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
        path: JSON file of the user's "always" rules (read now if it exists); ``None`` keeps them in memory.
        skip_permissions: allow every action no deny rule refuses (``--skip-permissions``).
        defaults: apply the built-in read-only allow-list and the secrets ask rules.
        working_dir: directory relative path patterns refer to (default: the current directory).
        project: a freeact project (the directory holding ``.freeact/``) whose ``permissions.toml``
            applies; "always" rules freeact can hold are saved there. ``None``: no project rules.

    Raises:
        PermissionsFileError: the user's rules file exists but cannot be read or is malformed.
        FreeactConfigError: the project's ``permissions.toml`` cannot be read.
    """

    def __init__(
        self,
        path: Path | None = None,
        *,
        skip_permissions: bool = False,
        defaults: bool = True,
        working_dir: Path | None = None,
        project: Path | None = None,
    ) -> None:
        self.path = path
        self.skip_permissions = skip_permissions
        self.defaults = defaults
        self.working_dir = Path(os.path.abspath(working_dir or Path.cwd()))
        self.project = project
        self._session: dict[Effect, list[Rule]] = _no_rules()
        self._always: dict[Effect, list[Rule]] = self._read() if path else _no_rules()
        self._project: dict[Effect, list[Rule]] = self._read_project()

    @classmethod
    def load(
        cls,
        path: Path,
        *,
        skip_permissions: bool = False,
        defaults: bool = True,
        working_dir: Path | None = None,
        project: Path | None = None,
    ) -> PermissionRules:
        """Rules with the "always" scope read from ``path`` (a missing file means none yet).

        Raises:
            PermissionsFileError: the file cannot be read or is malformed; it is left untouched.
        """
        return cls(
            path,
            skip_permissions=skip_permissions,
            defaults=defaults,
            working_dir=working_dir,
            project=project,
        )

    @property
    def project_file(self) -> Path | None:
        """The freeact project's ``permissions.toml`` (whether or not it exists yet)."""
        return self.project / paths.FREEACT_DIR_NAME / "permissions.toml" if self.project else None

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

    def add(
        self,
        call_kind: str,
        pattern: str,
        *,
        scope: Scope,
        effect: Effect = "allow",
        place: RuleScope | None = None,
    ) -> RuleScope:
        """Add a rule; an "always" rule is written to its file before it takes effect.

        In a freeact project an "always" allow or ask rule freeact can hold (shell, file and tool
        rules) goes to ``.freeact/permissions.toml``; others (deny rules, exact cells) to the user's file.

        Args:
            call_kind: A tool call kind or ``*``.
            pattern: See the module docstring.
            scope: ``"always"`` (persisted) or ``"session"`` (this process only).
            effect: ``"allow"``, ``"ask"`` or ``"deny"``.
            place: for an "always" rule, ``"always"`` keeps it in the user's file even in a freeact project.

        Returns:
            Where the rule now lives (``"session"``, ``"always"`` or ``"project"``).

        Raises:
            ValueError: unknown kind, scope or effect, or an empty pattern.
            PermissionsFileError: the file is broken or cannot be written (the rule is not added).
        """
        rule = self._validate(call_kind, pattern, scope, effect)
        if scope == "session":
            if rule not in self._session[effect]:
                self._session[effect].append(rule)
            return "session"
        if self.project is not None and self.project_file is not None and place != "always":
            try:
                saved = add_freeact_permission(self.project, effect, rule.kind, rule.pattern)
            except FreeactConfigError as e:
                raise PermissionsFileError(self.project_file, str(e)) from e
            if saved:
                self._project = self._read_project()
                return "project"
        # Re-read first so that rules another instance saved meanwhile are kept.
        rules = self._read() if self.path else {e: list(r) for e, r in self._always.items()}
        if rule not in rules[effect]:
            rules[effect].append(rule)
            self._write(rules)
        self._always = rules
        return "always"

    def remove(self, entry: RuleEntry) -> None:
        """Remove a rule from where it lives (the session, the user's file or the freeact project file).

        Raises:
            ValueError: a built-in rule (override it with an ask or deny rule instead), or no such rule.
            PermissionsFileError: the file cannot be read or written (the rule stays).
        """
        rule = Rule(entry.kind, entry.pattern)
        if entry.scope == "default":
            raise ValueError("a built-in rule cannot be removed; add an ask or deny rule to override it")
        if entry.scope == "session":
            if rule not in self._session[entry.effect]:
                raise ValueError(f"no session rule {entry.kind}:{entry.pattern}")
            self._session[entry.effect].remove(rule)
            return
        if entry.scope == "project":
            if self.project is None or self.project_file is None:
                raise ValueError("no freeact project")
            try:
                removed = remove_freeact_permission(self.project, entry.effect, entry.kind, entry.pattern)
            except FreeactConfigError as e:
                raise PermissionsFileError(self.project_file, str(e)) from e
            self._project = self._read_project()
            if not removed:
                raise ValueError(f"no such rule in {self.project_file}")
            return
        rules = self._read() if self.path else {e: list(r) for e, r in self._always.items()}
        if rule not in rules[entry.effect]:
            raise ValueError(f"no saved rule {entry.kind}:{entry.pattern}")
        rules[entry.effect].remove(rule)
        self._write(rules)
        self._always = rules

    def change(self, entry: RuleEntry, *, effect: Effect, pattern: str | None = None) -> RuleEntry:
        """Give a rule another effect (and pattern), where it lives; a built-in rule is overridden by a user rule.

        Returns:
            The rule as it now is.

        Raises:
            ValueError: an invalid pattern or effect.
            PermissionsFileError: the file cannot be read or written.
        """
        new_pattern = entry.pattern if pattern is None else pattern
        scope: Scope = "session" if entry.scope == "session" else "always"
        self._validate(entry.kind, new_pattern, scope, effect)
        if entry.scope != "default":
            self.remove(entry)
        # The rule stays where it lives (a built-in one is overridden where new rules go).
        place = entry.scope if entry.scope in ("always", "project") else None
        where = self.add(entry.kind, new_pattern, scope=scope, effect=effect, place=place)
        return RuleEntry(entry.kind, new_pattern, effect, where)

    def rules(self) -> list[RuleEntry]:
        """Every rule in precedence order (denies first, then asks), for display."""
        out: list[RuleEntry] = []
        for effect in _PRECEDENCE:
            out += [RuleEntry(r.kind, r.pattern, effect, "session") for r in self._session[effect]]
            out += [RuleEntry(r.kind, r.pattern, effect, "always") for r in self._always[effect]]
            out += [RuleEntry(r.kind, r.pattern, effect, "project") for r in self._project[effect]]
            if self.defaults:
                out += [RuleEntry(r.kind, r.pattern, effect, "default") for r in _DEFAULTS[effect]]
        return out

    def _validate(self, kind: str, pattern: str, scope: str, effect: str) -> Rule:
        if scope not in ("always", "session"):
            raise ValueError(f"unknown scope {scope!r} (always or session)")
        if effect not in _EFFECTS:
            raise ValueError(f"unknown effect {effect!r} (allow, ask or deny)")
        return _make_rule(kind, pattern)

    def _write(self, rules: dict[Effect, list[Rule]]) -> None:
        if not self.path:
            return
        data = {
            e: [{"kind": r.kind, "pattern": r.pattern} for r in rules[e]]
            for e in _EFFECTS
            if e != "deny" or rules[e]  # files without deny rules keep their old shape
        }
        try:
            atomic_write_text(self.path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        except OSError as e:
            raise PermissionsFileError(self.path, f"cannot be written ({e})") from e

    def _read(self) -> dict[Effect, list[Rule]]:
        assert self.path is not None
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return _no_rules()
        except (OSError, UnicodeDecodeError) as e:
            raise PermissionsFileError(self.path, f"cannot be read ({e})") from e
        return _parse(self.path, text)

    def _read_project(self) -> dict[Effect, list[Rule]]:
        rules = _no_rules()
        if self.project is None or self.project_file is None:
            return rules
        found = read_freeact_permissions(self.project)  # FreeactConfigError names the file
        for effect, kind, pattern in found:
            try:
                rule = _make_rule(kind, pattern)
            except ValueError:
                continue  # a freeact rule this app's rules cannot hold is left to freeact
            if rule not in rules[effect]:  # type: ignore[index]
                rules[effect].append(rule)  # type: ignore[index]
        return rules


def project_rules_dir(working_dir: Path) -> Path | None:
    """The project whose rules apply in ``working_dir``: the nearest freeact project (``.freeact/``), if any.

    The one place that decides whether a project's rules apply (project trust gates it here).
    """
    return paths.find_freeact_project(working_dir)


def rules_for(
    working_dir: Path, *, skip_permissions: bool = False, user_file: Path | None = None
) -> PermissionRules:
    """The rules the app and headless ``run`` apply in ``working_dir``: the user's file, the project's
    ``.freeact/permissions.toml`` (see ``project_rules_dir``) and the defaults.

    Raises:
        PermissionsFileError: the user's rules file cannot be read or is malformed.
        FreeactConfigError: the project's ``permissions.toml`` cannot be read.
    """
    return PermissionRules.load(
        user_file or paths.permissions_file(),
        skip_permissions=skip_permissions,
        working_dir=working_dir,
        project=project_rules_dir(working_dir),
    )
