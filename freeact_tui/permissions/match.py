"""What a permission rule matches: rule kinds and effects, the built-in defaults, and the matcher.

``rule_matches(entry, facts)`` decides one rule against one call; ``CallFacts`` computes what rules
look at (path arguments, the programs a command runs, risky flags) once per call. ``permissions``
holds the rules and their files; the semantics are described there.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Literal

from freeact_tui.filenames import fold_path
from freeact_tui.gitrun import repo_program_keys
from freeact_tui.permissions.cells import cell_matches
from freeact_tui.project.app_state import app_state_at
from freeact_tui.project.policy import project_path_refusal
from freeact_tui.reach.breadth import EFFECT_PREFIX, PATH_PREFIX, broad_allow, escape_glob, is_cell_pattern
from freeact_tui.reach.gitnames import unseen_git_read
from freeact_tui.reach.globs import (
    code_strings,
    expand_path,
    glob_matches,
    json_path_values,
    path_regex,
    shell_path_words,
)
from freeact_tui.reach.search import searched_secrets
from freeact_tui.shell.gitreads import SECRET_NAMES
from freeact_tui.shell.programs import Unwrapped, program_name, unsafe_use, unwrap
from freeact_tui.shell.words import (
    CommandTraits,
    command_words,
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
RuleScope = Literal["session", "always", "folder", "project", "default"]
"""Where a rule lives: this process, the user's file, the freeact project file, or built in."""

KINDS = ("code", "shell", "script", "mcp", "tool", "subagent", "read", "write")
EFFECTS: tuple[Effect, ...] = ("allow", "ask", "deny")
# Argument names of MCP / JSON tools whose values are paths.


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
        return self.effect == "allow" and broad_allow(self.kind, self.pattern)


# Read-only commands allowed by default; ``X *`` also allows bare ``X``. None prints a credential store:
# ``git remote -v`` prints the remote URLs of the repository's config (``https://user:token@…``), and
# ``pip freeze`` the remote URL of each editable git checkout (``-e git+https://user:token@…``, pip reads
# it from that checkout's config unredacted): what a command prints is read like a file it names, and
# a credential store is asked (``SECRET_NAMES``).
_DEFAULT_SHELL_ALLOW = (
    "pwd", "whoami", "id *", "hostname", "uname *", "date *", "uptime", "which *", "whereis *", "type *",
    "ls *", "tree *", "stat *", "file *", "du *", "df *", "wc *", "cat *", "head *", "tail *", "nl *",
    "echo *", "printf *", "grep *", "egrep *", "fgrep *", "rg *", "find *", "sort *", "cut *", "diff *",
    "basename *", "dirname *", "realpath *", "readlink *",
    "git status *", "git log *", "git diff *", "git show *", "git blame *", "git ls-files *",
    "git rev-parse *", "git describe *", "git shortlog *", "git tag", "git stash list",
    "git branch", "git branch -a", "git branch -r", "git branch -v", "git branch -vv", "git branch -av",
    "git branch --all", "git branch --list", "git branch --show-current",
    "python --version", "python3 --version", "python -V", "python3 -V",
    "pip --version", "pip list *", "pip show *",
)  # fmt: skip
# Secrets ask everywhere (inside the working dir and out), whatever allows the call: keys, tokens in
# tool config dirs, and shell/REPL histories (they hold pasted secrets).
_SECRETS = SECRET_NAMES  # one table: the git reads (``gitreads``) judge by it too
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
DEFAULT_RULES: dict[Effect, tuple[Rule, ...]] = {
    "deny": (),
    "ask": (
        *(Rule("*", PATH_PREFIX + root + p) for root in ("**/", "/**/") for p in _SECRETS),
        *(Rule("*", PATH_PREFIX + "~/" + p) for p in _HOME_SECRETS),
        *(Rule("*", PATH_PREFIX + p) for p in _SYSTEM_SECRETS),
    ),
    # File tools: reads inside the working directory (symlinks followed) run without asking.
    # Tool discovery only lists the generated tools (freeact allows it by default too).
    "allow": (
        *(Rule("shell", p) for p in _DEFAULT_SHELL_ALLOW),
        Rule("read", PATH_PREFIX + "**"),
        *(
            Rule("tool", name)
            for name in ("pytools_list_categories", "pytools_list_tools", "pytools_search_tools")
        ),
    ),
}
PRECEDENCE: tuple[Effect, ...] = ("deny", "ask", "allow")
# Strictest first: the effect of a composite shell command is the strictest of its parts.
STRICTNESS: dict[Effect, int] = {"deny": 2, "ask": 1, "allow": 0}


class CallFacts:
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
    def unwrapped(self) -> Unwrapped:
        """Every command this runs, looked through wrappers, ``eval``, ``sh -c`` … (``shellprograms.unwrap``)."""
        return unwrap(self.call.subject)

    @cached_property
    def programs(self) -> list[str]:
        """What the command runs, each program by name: its wrappers, what they run, its substitutions."""
        return [" ".join(words) for words in self.unwrapped.commands]

    @cached_property
    def opaque(self) -> bool:
        """A shell command runs something that cannot be read here (``eval "$x"``, ``sh file``, a git alias)."""
        return isinstance(self.call, ShellAction | ShellScript) and bool(self.unwrapped.opaque)

    @cached_property
    def unsafe(self) -> list[str]:
        """The flags (or script pieces) by which a program of this command writes or runs something."""
        return [u for words in self.unwrapped.commands if (u := unsafe_use(words)) is not None]

    @cached_property
    def repo_programs(self) -> bool:
        """The command runs git, and the repository's config holds a setting not known to run no program
        (or cannot be read): what git runs there is the repository's to say (``gitrun``)."""
        if not any(words[0] == "git" for words in self.unwrapped.commands if words):
            return False
        where = self._runs_in()
        keys = repo_program_keys(where) if where is not None else None
        return keys is None or bool(keys)

    def _runs_in(self) -> Path | None:
        """The directory this part of a command line runs in: the working dir, or where a ``cd`` before it
        on the same line went (the kernel prefixes one when a cell changed directory); ``None``: cannot
        tell (``cd -``, ``cd $X``, ``popd``)."""
        where = self.working_dir
        full = self.call.full_command if isinstance(self.call, ShellAction) else ""
        for part in split_command(full):
            if part.strip() == self.call.subject.strip():
                break
            words = command_words(part)
            if words and words[0] in ("cd", "pushd", "popd"):
                target = words[1] if len(words) > 1 and words[0] != "popd" else ""
                if not target or target == "-" or any(c in target for c in "$`*?[~{"):
                    return None
                where = where / target
        return where

    @cached_property
    def unbounded_git(self) -> list[str]:
        """git reads of this command that may print a secret no word names, as git reads their words
        (``gitnames.unseen_git_read``: what each names in git's store, which stored paths its pathspec
        reaches)."""
        reads = [words for words in self.unwrapped.commands if words and words[0] == "git"]
        if not isinstance(self.call, ShellAction) or not reads:
            return []
        where = self._runs_in()
        if where is None:
            return ["a folder that cannot be told"]
        return [u for words in reads if (u := unseen_git_read(words, where)) is not None]

    @cached_property
    def searched_secrets(self) -> list[str]:
        """Secret-named files a recursive search of this command reads unnamed (``searchreach``)."""
        searches = [words for words in self.unwrapped.commands if words and words[0] == "rg"]
        if not isinstance(self.call, ShellAction) or not searches:
            return []
        where = self._runs_in()
        if where is None:
            return ["a folder that cannot be told"]
        return [s for words in searches for s in searched_secrets(words, where)]

    @cached_property
    def app_state(self) -> list[str]:
        """The paths of this call in the app's own state (``project.app_state``: its rules, trust, sessions),
        wherever the working folder is; a rule allowing one by a pattern never reaches them."""
        root = self.working_dir.as_posix()
        full = [p if p.startswith("/") else f"{root}/{p}" for p in self.paths]
        return [p for p in full if app_state_at(p) is not None]

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


def _runs(pattern: str, facts: CallFacts) -> bool:
    """A program the command runs (looked through every wrapper) matches a shell ``pattern``."""
    by_name = _program_pattern(pattern)
    return any(glob_matches(by_name, p) for p in facts.programs)


def _exact(pattern: str, call: ToolCall) -> bool:
    """The rule names this very text (an exact cell, or the command spelled out): the user saw it all."""
    if is_cell_pattern(pattern):
        return cell_matches(pattern, call.subject)
    return pattern in (call.subject, escape_glob(call.subject))


def rule_matches(entry: RuleEntry, facts: CallFacts) -> bool:
    call = facts.call
    if entry.pattern.startswith(EFFECT_PREFIX):
        return False  # an effect rule is never matched on text (``permissions`` judges it by effects)
    # A script is shell commands: a shell deny or ask rule judges every command it runs.
    script_guard = entry.effect != "allow" and entry.kind == "shell" and isinstance(call, ShellScript)
    if entry.kind not in ("*", call.kind) and not script_guard:
        return False
    if entry.scope == "project" and entry.effect == "allow" and any(map(project_path_refusal, facts.paths)):
        return False  # a project's rule allows only the project's own ordinary files, however it is spelled
    own_words = entry.scope not in ("default", "project") and _exact(entry.pattern, call)
    if entry.effect == "allow" and facts.app_state and not own_words:
        # the app's own rules, trust and sessions: never ordinary work, whatever a pattern (or a project) says;
        # only the user's own rule spelling out this very command reaches them
        return False
    if entry.effect == "allow" and facts.opaque and (entry.scope == "default" or not _exact(entry.pattern, call)):
        return False  # what runs cannot be told: asked, whatever a pattern would allow
    if entry.pattern.startswith(PATH_PREFIX):
        return _path_matches(entry, facts)
    if is_cell_pattern(entry.pattern):
        return isinstance(call, CodeAction | ShellScript) and cell_matches(entry.pattern, call.subject)
    if isinstance(call, ShellScript) and entry.effect != "allow":
        return glob_matches(entry.pattern, call.script) or _runs(entry.pattern, facts)
    if not isinstance(call, ShellAction):
        # Spelled out in full (a one-line code action), glob characters and all, or a glob.
        return entry.pattern == call.subject or glob_matches(entry.pattern, call.subject)
    return _command_matches(entry, facts, call)


def _path_matches(entry: RuleEntry, facts: CallFacts) -> bool:
    """A ``path:`` rule matches the paths the call touches."""
    pattern = os.path.expanduser(entry.pattern[len(PATH_PREFIX) :])
    regex, absolute = path_regex(pattern), pattern.startswith("/")
    if entry.effect != "allow":
        # Asking or refusing: an absolute pattern also sees paths inside the working dir in full; names are
        # compared as a file system may compare them (``filenames.fold``: ``.ENV`` is asked as ``.env``).
        regex = path_regex(fold_path(pattern))
        full = [p if p.startswith("/") else f"{facts.working_dir.as_posix()}/{p}" for p in facts.paths]
        return any(
            regex.fullmatch(fold_path(f if absolute else p)) is not None and (absolute or not p.startswith("/"))
            for p, f in zip(facts.paths, full, strict=True)
        )
    # A relative pattern never matches a path outside the working dir, however broad it is.
    hits = [p.startswith("/") == absolute and regex.fullmatch(p) is not None for p in facts.paths]
    return bool(hits) and all(hits)


def _command_matches(entry: RuleEntry, facts: CallFacts, call: ShellAction) -> bool:
    """A shell rule matches one ``!cmd`` command: refusing matches what it runs, allowing only what is seen."""
    if entry.effect == "allow" and entry.scope in ("default", "project") and facts.repo_programs:
        return False  # a read-only git runs what the repository names (gitrun): the user decides
    if entry.pattern == call.command and entry.scope != "default":
        return True  # spelled out in full: the user has seen exactly this command (``cat *`` is no default's)
    if entry.effect != "allow":
        # Refusing or asking is safe whatever the command hides: match the program, not its spelling.
        return glob_matches(entry.pattern, call.command) or _runs(entry.pattern, facts)
    if not facts.traits.simple:
        return False
    if facts.unsafe and not _names_flag(entry.pattern, facts.unsafe):
        return False
    if entry.scope in ("default", "project") and facts.unbounded_git:
        return False  # a git read that may print a secret no word names (as git reads its words)
    if entry.scope in ("default", "project") and facts.searched_secrets:
        return False  # a search that reads a secret no path word names: asked
    if entry.scope in ("default", "project") and facts.outside:
        return False  # the read-only table (and a project's rules, bound to it) reads inside the folder only
    return glob_matches(entry.pattern, call.command)
