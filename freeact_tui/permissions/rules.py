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
program that runs, however it is spelled (``/bin/rm``, ``\\rm``, ``'rm'``, ``$'\\x72m'``, wrappers such
as ``command``/``env``/``exec``/``sudo``/``xargs``/``nice``/``timeout``, ``eval``, ``sh -c``,
``busybox``, ``git -c alias.x='!rm …'``, ``find -exec``/``-delete``, substitutions: one unwrapping step,
``shellprograms.unwrap``); a shell deny or ask rule also judges every command of a shell script. What
runs but cannot be read (``eval "$x"``, ``sh file``, a git alias of the repository) is asked: no allow
rule matches it but one that spells out the very command or cell.

A code (or script) rule ``cell:<fingerprint>`` matches one exact cell (``freeact_tui.permissions.cells``);
a code rule ``effects:<class>`` (``in-folder``, ``reads``, ``computes``, …) matches by what the code
does (``freeact_tui.effects``); other code patterns match the cell's text and are broad. The reading
depends on what ran in the kernel (``freeact_tui.effects.ledger``, passed as ``kernel=``): after a cell
no reading follows, effect rules allow nothing, and the built-in allow rules nothing the kernel runs.

An "always" rule whose meaning depends on the folder (``folder_scope.folder_relative``: allowing code, a
relative path or a shell command that names a relative path or none, an effect rule of every class but
``computes`` and ``unknown``, which speak of "this folder") is saved with the folder it was given in: in a file of the user's data keyed by
the folder's resolved path (``folder_rules_file``), applied only there (scope ``folder``). Such rules saved
user-wide before keep applying in any folder (the rules screen says so).

Rules live in the session, the user's file, a freeact project's ``.freeact/permissions.toml`` (freeact's
format; an "always" rule freeact can hold is saved there) and the built-in defaults. A project's allow
rule that the app calls broad, or that reaches past the project's own ordinary files
(``project_policy.project_rule_refusal``), is never applied; such a rule the user saves goes to the user's
file. A project allow rule that is applied still never matches a path (as written or resolved) outside the
folder, secret, protected or code-configuring (``project_policy.project_path_refusal``, in ``match``).

Three effects: ``deny`` refuses the action without asking (even with ``--skip-permissions``), ``ask``
forces a question, ``allow`` runs it. Precedence: deny (session, always), then ask (session, always,
default), then allow (session, always, default): deny beats allow, an explicit ask rule beats allow
(secrets keep asking), and no match means ask. A deny rule matches as broadly as an ask rule: any
path argument it names, and shell wildcards also match commands with substitutions or redirections.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from freeact_tui.effects import check_pattern as check_effect_pattern
from freeact_tui.effects import class_of
from freeact_tui.effects import pattern_matches as effect_pattern_matches
from freeact_tui.effects.ledger import KernelLedger, runs_in_kernel
from freeact_tui.effects.modes import ApprovalMode
from freeact_tui.permissions.folder_scope import FOLDER_FREE, folder_reason, folder_relative
from freeact_tui.permissions.match import (
    DEFAULT_RULES,
    EFFECTS,
    KINDS,
    PATH_PREFIX,
    PRECEDENCE,
    STRICTNESS,
    CallFacts,
    Effect,
    Rule,
    RuleEntry,
    RuleScope,
    Scope,
    rule_matches,
)
from freeact_tui.project import files as projectfiles
from freeact_tui.project import paths
from freeact_tui.project.freeact_dir import (
    FreeactConfigError,
    add_freeact_permission,
    read_freeact_permissions,
    remove_freeact_permission,
)
from freeact_tui.project.paths import atomic_write_text
from freeact_tui.project.policy import project_rule_refusal
from freeact_tui.shell.words import split_command
from freeact_tui.toolcalls import CodeAction, ShellAction, ToolCall

__all__ = [
    "KINDS",
    "PATH_PREFIX",
    "Effect",
    "PermissionRules",
    "PermissionsFileError",
    "Rule",
    "RuleEntry",
    "RuleScope",
    "Scope",
    "FOLDER_FREE",
    "folder_reason",
    "folder_relative",
    "folder_rules_file",
    "project_rules_dir",
    "rules_for",
]


def folder_rules_file(user_file: Path, folder: Path) -> Path:
    """Where the folder-relative rules given in ``folder`` are kept: beside the user's file, keyed by the
    folder's resolved path."""
    key = hashlib.sha256(str(folder.resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return user_file.parent / "folder-rules" / f"{key}.json"


class PermissionsFileError(Exception):
    """The permissions file cannot be read or is malformed; ``str(error)`` names the file."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"permissions file {path}: {reason}")
        self.path = path
        self.reason = reason


def _no_rules() -> dict[Effect, list[Rule]]:
    return {effect: [] for effect in EFFECTS}


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
    unknown = sorted(set(data) - set(EFFECTS))
    if unknown:
        raise PermissionsFileError(path, f"unknown key {unknown[0]!r} (expected 'allow', 'ask' and 'deny')")
    result = _no_rules()
    for effect in EFFECTS:
        entries = data.get(effect, [])
        if not isinstance(entries, list):
            raise PermissionsFileError(path, f"{effect!r} must be a list of rules")
        for k, entry in enumerate(entries, 1):
            where = f"rule {k} of {effect!r}"
            if not isinstance(entry, dict) or set(entry) != {"kind", "pattern"}:
                raise PermissionsFileError(path, f'{where}: expected {{"kind": ..., "pattern": ...}}')
            try:
                rule = _make_rule(entry["kind"], entry["pattern"], effect)
            except ValueError as e:
                raise PermissionsFileError(path, f"{where}: {e}") from e
            if rule not in result[effect]:
                result[effect].append(rule)
    return result


def _make_rule(kind: object, pattern: object, effect: str = "ask") -> Rule:
    if not isinstance(kind, str) or kind not in (*KINDS, "*"):
        raise ValueError(f"unknown kind {kind!r} (one of {', '.join(KINDS)}, or *)")
    if not isinstance(pattern, str) or not pattern.strip():
        raise ValueError("the pattern must be a non-empty string")
    check_effect_pattern(kind, pattern, effect)
    return Rule(kind, pattern)


def rule_problem(kind: str, pattern: str, effect: str) -> str | None:
    """Why no rule can hold ``pattern`` (an unknown effect class, an empty pattern, …), or ``None``: the one
    check the approval dialog shows while the pattern is typed and the rule store applies when it saves."""
    try:
        _make_rule(kind, pattern, effect)
    except ValueError as e:
        return str(e)
    return None


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
        self.mode = ApprovalMode.ASK
        """The approval mode (``freeact_tui.effects.modes``): what no rule decides, decided by what code does."""
        self.sandboxed = False
        """The kernel runs in the sandbox: the ``sandboxed-auto`` mode is there."""
        self._session: dict[Effect, list[Rule]] = _no_rules()
        self._always: dict[Effect, list[Rule]] = self._read() if path else _no_rules()
        self.folder_file = folder_rules_file(path, self.working_dir) if path else None
        """The folder-relative "always" rules given in this working directory (``folder_relative``)."""
        self._folder: dict[Effect, list[Rule]] = self._read(self.folder_file) if self.folder_file else _no_rules()
        self._project: dict[Effect, list[Rule]] = self._read_project()
        self.kernel = KernelLedger(self.working_dir)
        """What ran in the kernel, for the effect rules' readings when no other kernel's ledger is given
        (the approval gate keeps one per kernel: ``freeact_tui.effects.ledger``)."""

    @property
    def ran_names(self) -> frozenset[str]:
        """Trusted names (``print``, ``open``) code actions noted by ``note_ran`` rebound in the kernel."""
        return self.kernel.rebound

    def note_ran(self, call: ToolCall) -> None:
        """``call`` was approved to run: what it rebinds, or a cell the reading cannot tell, is kept in mind
        by later readings (``KernelLedger``)."""
        self.kernel.ran(call)

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

    def check(self, call: ToolCall, *, kernel: KernelLedger | None = None) -> Effect:
        """Decide whether ``call`` may run without asking, needs a question, or is refused.

        A composite shell command is allowed only when every part is allowed, and refused when
        any part is refused.

        Args:
            call: The action.
            kernel: what ran in the kernel the action runs in (``None``: ``self.kernel``); an effect rule
                judges code by a reading that depends on it.

        Returns:
            ``"allow"``, ``"ask"`` or ``"deny"``.
        """
        entry = self.matching_rule(call, kernel=kernel)
        effect: Effect = entry.effect if entry else "ask"
        if self.skip_permissions and effect != "deny":
            return "allow"
        return effect

    def matching_rule(self, call: ToolCall, *, kernel: KernelLedger | None = None) -> RuleEntry | None:
        """The rule that decides ``call`` (the first in precedence order that matches), if any.

        For a composite shell command: the rule of its strictest part (``None`` if a part matches none
        and no other part is denied).
        """
        if isinstance(call, ShellAction):
            parts = split_command(call.command)
            if not parts:
                return None
            if len(parts) > 1:
                full = call.full_command or call.command
                found = [self.matching_rule(ShellAction(p, full_command=full), kernel=kernel) for p in parts]
                denied = [e for e in found if e is not None and e.effect == "deny"]
                if denied:
                    return denied[0]
                if any(e is None for e in found):
                    return None
                return max(found, key=lambda e: STRICTNESS[e.effect] if e else -1)
            call = ShellAction(parts[0], full_command=call.full_command)
        facts = CallFacts(call, self.working_dir)
        ledger = kernel if kernel is not None else self.kernel
        # in a kernel that ran what no reading follows, the built-in allow-list vouches for nothing it runs
        untrusted = ledger.lost is not None and runs_in_kernel(call)
        return next(
            (
                entry
                for entry in self.rules()
                if not (untrusted and entry.scope == "default" and entry.effect == "allow")
                and self._matches(entry, facts, ledger)
            ),
            None,
        )

    def _matches(self, entry: RuleEntry, facts: CallFacts, kernel: KernelLedger) -> bool:
        """``rule_matches``, and an ``effects:`` rule judged by what the code does (``freeact_tui.effects``)."""
        if class_of(entry.pattern) is None:
            return rule_matches(entry, facts)
        if entry.kind not in ("*", "code") or not isinstance(facts.call, CodeAction):
            return False
        found = kernel.read(facts.call)
        return effect_pattern_matches(entry.pattern, entry.effect, found)

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
        in_project = project_rule_refusal(effect, rule.kind, rule.pattern) is None  # else never read back
        if self.project is not None and self.project_file is not None and place != "always" and in_project:
            try:  # the project's file is the folder's own: a rule of "this folder" freeact can hold goes there
                saved = add_freeact_permission(self.project, effect, rule.kind, rule.pattern)
            except FreeactConfigError as e:
                raise PermissionsFileError(self.project_file, str(e)) from e
            if saved:
                self._project = self._read_project()
                return "project"
        if place != "always" and folder_relative(rule.kind, rule.pattern, effect):
            self._folder = self._saved(self.folder_file, self._folder, rule, effect)
            return "folder"
        self._always = self._saved(self.path, self._always, rule, effect)
        return "always"

    def _saved(
        self, path: Path | None, held: dict[Effect, list[Rule]], rule: Rule, effect: Effect
    ) -> dict[Effect, list[Rule]]:
        """The rules of ``path`` (``held``: in memory) with ``rule`` added and written back."""
        # Re-read first so that rules another instance saved meanwhile are kept.
        rules = self._read(path) if path else {e: list(r) for e, r in held.items()}
        if rule not in rules[effect]:
            rules[effect].append(rule)
            self._write(rules, path)
        return rules

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
        path, held = (self.folder_file, self._folder) if entry.scope == "folder" else (self.path, self._always)
        rules = self._read(path) if path else {e: list(r) for e, r in held.items()}
        if rule not in rules[entry.effect]:
            raise ValueError(f"no saved rule {entry.kind}:{entry.pattern}")
        rules[entry.effect].remove(rule)
        self._write(rules, path)
        if entry.scope == "folder":
            self._folder = rules
        else:
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
        place = entry.scope if entry.scope in ("always", "project") else None  # a folder rule: by its pattern
        where = self.add(entry.kind, new_pattern, scope=scope, effect=effect, place=place)
        return RuleEntry(entry.kind, new_pattern, effect, where)

    def rules(self) -> list[RuleEntry]:
        """Every rule in precedence order (denies first, then asks), for display."""
        out: list[RuleEntry] = []
        for effect in PRECEDENCE:
            out += [RuleEntry(r.kind, r.pattern, effect, "session") for r in self._session[effect]]
            out += [RuleEntry(r.kind, r.pattern, effect, "always") for r in self._always[effect]]
            out += [RuleEntry(r.kind, r.pattern, effect, "folder") for r in self._folder[effect]]
            out += [RuleEntry(r.kind, r.pattern, effect, "project") for r in self._project[effect]]
            if self.defaults:
                out += [RuleEntry(r.kind, r.pattern, effect, "default") for r in DEFAULT_RULES[effect]]
        return out

    def _validate(self, kind: str, pattern: str, scope: str, effect: str) -> Rule:
        if scope not in ("always", "session"):
            raise ValueError(f"unknown scope {scope!r} (always or session)")
        if effect not in EFFECTS:
            raise ValueError(f"unknown effect {effect!r} (allow, ask or deny)")
        return _make_rule(kind, pattern, effect)

    def _write(self, rules: dict[Effect, list[Rule]], path: Path | None = None) -> None:
        path = path or self.path
        if not path:
            return
        data = {
            e: [{"kind": r.kind, "pattern": r.pattern} for r in rules[e]]
            for e in EFFECTS
            if e != "deny" or rules[e]  # files without deny rules keep their old shape
        }
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        except OSError as e:
            raise PermissionsFileError(path, f"cannot be written ({e})") from e

    def _read(self, path: Path | None = None) -> dict[Effect, list[Rule]]:
        path = path or self.path
        assert path is not None
        try:
            text = projectfiles.read_text(path)
        except FileNotFoundError:
            return _no_rules()
        except (OSError, UnicodeDecodeError) as e:
            raise PermissionsFileError(path, f"cannot be read ({e})") from e
        return _parse(path, text)

    def _read_project(self) -> dict[Effect, list[Rule]]:
        rules = _no_rules()
        if self.project is None or self.project_file is None:
            return rules
        found = read_freeact_permissions(self.project)  # FreeactConfigError names the file
        for effect, kind, pattern in found:
            try:
                rule = _make_rule(kind, pattern, effect)
            except ValueError:
                continue  # a freeact rule this app's rules cannot hold is left to freeact
            if project_rule_refusal(effect, kind, pattern) is not None:
                continue  # never applied: the trust dialog names it
            if rule not in rules[effect]:  # type: ignore[index]
                rules[effect].append(rule)  # type: ignore[index]
        return rules


def project_rules_dir(working_dir: Path, *, trusted: bool = True) -> Path | None:
    """The project whose rules apply in ``working_dir``: the nearest freeact project (``.freeact/``), if any.

    The one place that decides whether a project's rules apply: none before the folder is trusted.
    """
    return paths.find_freeact_project(working_dir) if trusted else None


def rules_for(
    working_dir: Path,
    *,
    skip_permissions: bool = False,
    user_file: Path | None = None,
    trusted: bool = True,
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
        project=project_rules_dir(working_dir, trusted=trusted),
    )
