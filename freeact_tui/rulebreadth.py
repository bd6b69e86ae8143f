"""How far a rule pattern reaches: the app's one "broad" check (#39).

``broad_reason(kind, pattern)`` says in words why a pattern reaches much further than one action
(``*`` for code is all Python in every future session; ``shell:*`` any program; ``bash *`` any code);
``broad_allow(kind, pattern)`` is true for an allow pattern on code or scripts that is not one exact
cell (any code may follow what it names). The approval dialog warns with them, the rules screen marks
them, and a project file may hold none of them (``project_policy.project_rule_refusal``).
Pure text functions: no other module of the app is needed.
"""

from __future__ import annotations

import re

CELL_PREFIX = "cell:"
"""An exact-cell pattern: ``cell:<fingerprint>`` (``freeact_tui.cellrules``)."""
PATH_PREFIX = "path:"
EFFECT_PREFIX = "effects:"
"""A code rule by what the code does (``effects:in-folder``), judged through ``freeact_tui.effects``."""
FOLDER_CLASSES = ("computes", "reads", "in-folder")
"""Effect classes that stay inside the folder: the only ones a remembered decision proposes, never broad."""

_WILDCARD = re.compile(r"[*?\[]")
_ESCAPED = re.compile(r"\[([*?\[])\]")
_GLOB_CHARS = re.compile(r"([*?\[])")
# Programs that run whatever their arguments say: allowing them by name allows any code.
_RUNS_ANYTHING = frozenset(
    "python python2 python3 py pypy pypy3 ipython bash sh zsh fish dash ksh csh tcsh node deno bun perl ruby "
    "php lua Rscript R julia osascript pwsh powershell sudo su doas env xargs exec eval nohup nice timeout "
    "time watch ssh npx uvx pipx bunx docker podman kubectl uv poetry pip pip3 npm make".split()
)
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


def broad_reason(kind: str, pattern: str) -> str | None:
    """Why ``pattern`` (for actions of ``kind``) reaches far beyond one action, or ``None`` if it does not."""
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
        return _shell_breadth(text)
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


def _shell_breadth(pattern: str) -> str | None:
    words = pattern.split()
    if not words or has_wildcard(words[0]):
        return f"`{pattern}` matches any program"
    program = words[0].rsplit("/", 1)[-1]
    literal = [w for w in words[1:] if not has_wildcard(w)]
    wild = len(literal) < len(words) - 1
    has_argument = any(not w.startswith("-") for w in literal)
    if has_argument or (not wild and len(words) > 1):
        return None
    if program in _RUNS_ANYTHING:
        return f"`{pattern}` lets `{program}` run any code or program"
    if program in _TOUCHES_ANY_FILE and wild:
        return f"`{pattern}` lets `{program}` act on any file or address"
    return None



__all__ = ["CELL_PREFIX", "PATH_PREFIX", "broad_allow", "broad_reason", "escape_glob", "has_wildcard", "is_cell_pattern"]
