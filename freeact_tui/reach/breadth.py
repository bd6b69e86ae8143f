"""How far a rule pattern reaches: the app's one "broad" check (#39).

``broad_reason(kind, pattern)`` says in words why a pattern reaches much further than one action
(``*`` for code is all Python in every future session; ``shell:*`` any program; ``bash *`` any code);
``broad_allow(kind, pattern)`` is true for an allow pattern on code or scripts that is not one exact
cell (any code may follow what it names). The approval dialog warns with them, the rules screen marks
them, and a project file may hold none of them (``project_policy.project_rule_refusal``).
Pure text functions over the shell reading of ``shellprograms`` (a pattern is judged as matching
judges a command: unwrapped).
"""

from __future__ import annotations

import itertools
import re
import shlex

from freeact_tui.shell.options import PROGRAM_OPTIONS
from freeact_tui.shell.programs import WORD_RUNNERS, program_name, unsafe_use, unwrap
from freeact_tui.shell.words import command_words

CELL_PREFIX = "cell:"
"""An exact-cell pattern: ``cell:<fingerprint>`` (``freeact_tui.permissions.cells``)."""
PATH_PREFIX = "path:"
EFFECT_PREFIX = "effects:"
"""A code rule by what the code does (``effects:in-folder``), judged through ``freeact_tui.effects``."""
FOLDER_CLASSES = ("computes", "reads", "in-folder")
"""Effect classes that stay inside the folder: the only ones a remembered decision proposes, never broad."""

_WILDCARD = re.compile(r"[*?\[]")
_ESCAPED = re.compile(r"\[([*?\[])\]")
_GLOB_CHARS = re.compile(r"([*?\[])")
# Programs (by family: versions taken off) that run whatever their arguments say: allowing them by name
# allows any code. Runners run a project's code by a verb (``uv run``, ``npm exec``, ``cargo run``).
RUNS_ANYTHING = frozenset(
    "python py pypy ipython jupyter bash sh zsh fish dash ksh csh tcsh node deno bun perl ruby irb "
    "php lua luajit Rscript R julia osascript pwsh powershell sudo su doas env xargs exec eval nohup nice timeout "
    "time watch ssh npx uvx pipx bunx docker podman kubectl uv poetry pip npm pnpm yarn make cargo go "
    "tox nox conda mamba micromamba pdm hatch pipenv rye pixi nix nix-shell parallel script systemd-run "
    "java javac dotnet gradle mvn sbt stack cabal ghc runghc mix elixir erl bundle rake gem just task invoke "
    "tclsh wish expect gdb lldb valgrind ltrace strace perf busybox toybox".split()
)
_RUNNER_VERBS = frozenset({"run", "exec", "x", "dlx", "shell", "script", "test", "start", "tool", "eval"})
_VERSION = re.compile(r"[\d.]+$")
READ_ONLY_PROGRAMS = frozenset(PROGRAM_OPTIONS) | {"pwd", "whoami", "hostname", "uptime", "true", "false"}
"""Programs known to only read (or print), whatever their arguments: a project may allow them with ``*``
(their options are checked when they run, ``programoptions``); every other program with ``*`` is broad
for a project (``broad_reason(..., strict=True)``)."""
READ_ONLY_SUBCOMMANDS = {
    "git": frozenset("status log diff show blame ls-files rev-parse describe shortlog".split()),
    "pip": frozenset({"list", "show", "freeze"}),
}
# Programs that delete, overwrite or send anything they are given.
_TOUCHES_ANY_FILE = frozenset(
    "rm rmdir dd mkfs shred chmod chown chgrp mv cp truncate tee kill pkill killall curl wget scp rsync "
    "git".split()
)
NOUN = {
    "code": "code action (any Python)",
    "script": "shell script",
    "shell": "shell command",
    "mcp": "MCP tool call",
    "tool": "tool call",
    "subagent": "subagent task",
}



def escape_glob(text: str) -> str:
    """A glob that matches ``text`` literally (``*`` as ``[*]``)."""
    return _GLOB_CHARS.sub(r"[\1]", text)


def is_cell_pattern(pattern: str) -> bool:
    return pattern.startswith(CELL_PREFIX)


def broad_allow(kind: str, pattern: str) -> bool:
    """An allow rule on code or scripts that is not an exact cell: any code may follow what it names.
    An effect class is bounded by what the code does: broad unless it stays inside the folder."""
    if pattern.startswith(EFFECT_PREFIX):
        return pattern[len(EFFECT_PREFIX) :].strip() not in FOLDER_CLASSES
    if is_cell_pattern(pattern) or pattern.startswith(PATH_PREFIX):
        return False
    return kind in ("code", "script", "*")


def broad_reason(kind: str, pattern: str, *, strict: bool = False) -> str | None:
    """Why ``pattern`` (for actions of ``kind``) reaches far beyond one action, or ``None`` if it does not.

    ``strict`` (a project's rule files, the dialog's proposals): a shell pattern with a wildcard is broad
    unless every program its literal head runs is known only to read (``READ_ONLY_PROGRAMS``); otherwise
    only programs known to run anything, or to act on any file, are broad.
    """
    text = pattern.strip()
    if text.startswith("path:"):
        rest = text[len("path:") :].strip()
        if not rest.strip("*/.~ "):
            return f"`{text}` matches every path, inside and outside the working directory"
        return None
    noun = NOUN.get(kind, "action")
    if is_cell_pattern(text):
        return None
    if text.startswith(EFFECT_PREFIX):
        name = text[len(EFFECT_PREFIX) :].strip()
        return None if name in FOLDER_CLASSES else f"`{text}` lets code that goes beyond this folder run unasked"
    if not text.strip("*?. "):
        return f"`{text}` matches every {noun}, in every future session"
    if kind in ("code", "script"):
        return _code_breadth(text, noun)
    if kind == "shell":
        return _shell_breadth(text, strict)
    return None


def has_wildcard(pattern: str) -> bool:
    """A glob character that is not escaped as ``[*]``."""
    return _WILDCARD.search(_ESCAPED.sub("", pattern)) is not None


def _literal_prefix(pattern: str) -> str:
    """The text a glob must start with (``[*]``-style escapes undone)."""
    out: list[str] = []
    k = 0
    while k < len(pattern):
        escaped = _ESCAPED.match(pattern, k)
        if escaped:
            out.append(escaped.group(1))
            k += 3
            continue
        if pattern[k] in "*?[":
            break
        out.append(pattern[k])
        k += 1
    return "".join(out)


def _code_breadth(pattern: str, noun: str) -> str | None:
    if not has_wildcard(pattern):
        return None
    prefix = _literal_prefix(pattern).strip()
    # Any code can follow the part a pattern names: a pattern on code is never narrow.
    if len(re.findall(r"\w+", prefix)) < 2 or len(prefix) < 6:
        return f"`{pattern}` matches almost every {noun}: anything that starts with `{prefix or '…'}`"
    return f"`{pattern}` matches every cell that starts with `{prefix}`, whatever code follows"


def _shell_breadth(pattern: str, strict: bool) -> str | None:
    """Judge the pattern as matching judges a command: its literal head unwrapped (``shellprograms.unwrap``),
    quotes, backslashes, paths and assignments gone, so ``\\python3 *``, ``LC_ALL=C *``, ``command *`` and
    ``uv run *`` name what they run."""
    words = command_words(pattern) or pattern.split()
    head = list(itertools.takewhile(lambda w: not has_wildcard(w), words))
    wild = len(head) < len(words)
    found = unwrap(" ".join(shlex.quote(w) for w in head))
    if not found.commands:
        return f"`{pattern}` matches any program" if wild or not words else None
    inner = found.commands[-1]
    program = program_name(inner[0])
    runs = program in WORD_RUNNERS or _family(program) in RUNS_ANYTHING | WORD_RUNNERS
    literal = [w for w in [*inner[1:], *words[len(head) :]] if not has_wildcard(w)]
    has_argument = any(not w.startswith("-") and not (runs and w in _RUNNER_VERBS) for w in literal)
    if runs and (wild or len(inner) == 1) and not has_argument:
        return f"`{pattern}` lets `{program}` run any code or program"  # a lone ``python`` reads code too
    if found.opaque and wild:
        return f"`{pattern}` runs what cannot be read here ({found.opaque[0]})"
    if strict:
        # An allow-list: with a wildcard, every program the head runs must be known only to read.
        unknown = [c for c in found.commands if not _known_to_read(c)]
        if wild and unknown:
            name = program_name(unknown[0][0])
            return f"`{pattern}` lets `{name}` do whatever its arguments say (not a program known only to read)"
        return None
    if has_argument or (not wild and len(words) > 1):
        return None
    if program in _TOUCHES_ANY_FILE and wild:
        return f"`{pattern}` lets `{program}` act on any file or address"
    return None


def unread_program(pattern: str) -> str | None:
    """Why a shell allow ``pattern`` may run a program not known only to read, or ``None``: every command
    its words run (unwrapped, wildcard or not) must be a read-only program or git/pip subcommand
    (``READ_ONLY_PROGRAMS``, ``READ_ONLY_SUBCOMMANDS``: the app's own read-only table). ``sh build.sh``,
    ``./build.sh``, ``npm test``, ``make``, ``pytest``: what they do is defined by files the agent may
    write, so a project may not allow them (#39)."""
    text = pattern.strip()
    words = command_words(text) or text.split()
    head = list(itertools.takewhile(lambda w: not has_wildcard(w), words))
    found = unwrap(" ".join(shlex.quote(w) for w in head))
    if found.opaque:
        return f"`{pattern}` runs what cannot be read here ({found.opaque[0]})"
    if not found.commands:
        return f"`{pattern}` matches any program"
    for command in found.commands:
        if not _known_to_read(command):
            name = program_name(command[0]) if command else pattern
            return f"`{pattern}` runs `{name}`, not a program known only to read"
    return None


def _family(program: str) -> str:
    """An interpreter by family: ``python3.11``, ``pypy3.10``, ``ipython3``, ``node18`` are ``python`` …"""
    return _VERSION.sub("", program) or program


def _known_to_read(words: list[str]) -> bool:
    """A command (one of a pattern's unwrapped head) whose program only reads, with no risky flag named."""
    if not words or unsafe_use(words) is not None:
        return False
    program = program_name(words[0])
    if program in READ_ONLY_SUBCOMMANDS:
        return len(words) > 1 and words[1] in READ_ONLY_SUBCOMMANDS[program]
    return program in READ_ONLY_PROGRAMS


__all__ = ["CELL_PREFIX", "PATH_PREFIX", "READ_ONLY_PROGRAMS", "READ_ONLY_SUBCOMMANDS", "RUNS_ANYTHING", "broad_allow", "broad_reason", "escape_glob", "unread_program", "has_wildcard", "is_cell_pattern"]
