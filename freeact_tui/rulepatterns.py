"""Patterns for remembered decisions: a narrow proposal for a call, and a warning for a broad pattern.

The approval dialog proposes ``proposed_pattern(call)`` for an "always" or "session" rule, and
``broad_reason(kind, pattern)`` says, in words for the user, why a pattern reaches much further than
the action at hand (``*`` for code is all Python in every future session). A broad "always" rule is
saved only after a second confirmation. For code and scripts the proposal is an exact-cell rule
(``cell:<fingerprint>``): any other pattern on code lets other code through, so it is broad.
"""

from __future__ import annotations

import re
import shlex

from freeact_tui.cellrules import cell_pattern, is_cell_pattern
from freeact_tui.effects import EFFECT_PREFIX, class_of, class_words
from freeact_tui.toolcalls import CodeAction, ShellAction, ShellScript, ToolCall

_WILDCARD = re.compile(r"[*?\[]")
_ESCAPED = re.compile(r"\[([*?\[])\]")
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
_NOUN = {
    "code": "code action (any Python)",
    "script": "shell script",
    "shell": "shell command",
    "mcp": "MCP tool call",
    "tool": "tool call",
    "subagent": "subagent task",
}


FOLDER_CLASSES = ("computes", "reads", "in-folder")
"""Effect classes a remembered decision on code proposes: nothing wider (wider code asks each time)."""


def proposed_pattern(call: ToolCall, effect_class: str | None = None) -> str:
    """A narrow pattern that matches ``call`` (and actions very much like it), for the dialog to propose.

    A code action whose effects stay inside the folder (``effect_class``, from ``ApprovalRequest``):
    its class (``effects:in-folder``), so that later code that does no more runs unasked. Other code
    or a script: the exact cell (``cell:<fingerprint>``, no other cell matches it). A shell
    command: the program (and subcommand) with ``*``, or, for programs that run or delete anything, the
    program with its first argument.
    """
    match call:
        case CodeAction() if effect_class in FOLDER_CLASSES:
            return EFFECT_PREFIX + str(effect_class)
        case CodeAction(code=text) | ShellScript(script=text):
            return cell_pattern(text)
        case ShellAction(command=command):
            return _shell_pattern(command)
    return call.suggested_pattern()


def broad_reason(kind: str, pattern: str) -> str | None:
    """Why ``pattern`` (for actions of ``kind``) reaches far beyond one action, or ``None`` if it does not."""
    text = pattern.strip()
    if text.startswith("path:"):
        rest = text[len("path:") :].strip()
        if not rest.strip("*/.~ "):
            return f"`{text}` matches every path, inside and outside the working directory"
        return None
    noun = _NOUN.get(kind, "action")
    if is_cell_pattern(text):
        return None
    if (name := class_of(text)) is not None:
        if name in FOLDER_CLASSES:
            return None
        return f"`{text}` lets {class_words(name)} run unasked, in every future session"
    if not text.strip("*?. "):
        return f"`{text}` matches every {noun}, in every future session"
    if kind in ("code", "script"):
        return _code_breadth(text, noun)
    if kind == "shell":
        return _shell_breadth(text)
    return None


def pattern_note(kind: str, pattern: str) -> str | None:
    """What a pattern matches, where it is not obvious (an exact cell, or code matched on its text)."""
    if is_cell_pattern(pattern.strip()):
        return "Matches only this exact cell (comments and formatting aside); any other code asks."
    if (name := class_of(pattern.strip())) is not None:
        return f"Matches {class_words(name)}, whatever it is written like; anything wider asks."
    if kind in ("code", "script") and not _has_wildcard(pattern):
        return "Matches only a cell that is exactly this text."
    return None


def rule_words(kind: str, pattern: str, effect: str = "allow") -> str:
    """A rule in words, as the rules screen, the dialog and ACP's options name it (never a hash)."""
    text = pattern.strip()
    if (name := class_of(text)) is not None:
        return class_words(name, effect=effect)
    if is_cell_pattern(text):
        return f"one exact {'script' if kind == 'script' else 'cell'} (comments and formatting aside)"
    noun = _NOUN.get(kind, "action" if kind != "*" else "any action").split(" (")[0]
    return f"{noun}s matching {text}" if kind not in ("read", "write") else f"{kind}s of {text}"


def _escape(text: str) -> str:
    """A glob that matches ``text`` literally."""
    return re.sub(r"([*?\[])", r"[\1]", text)


def _has_wildcard(pattern: str) -> bool:
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
    if not _has_wildcard(pattern):
        return None
    prefix = _literal_prefix(pattern).strip()
    # Any code can follow the part a pattern names: a pattern on code is never narrow.
    if len(re.findall(r"\w+", prefix)) < 2 or len(prefix) < 6:
        return f"`{pattern}` matches almost every {noun}: anything that starts with `{prefix or '…'}`"
    return f"`{pattern}` matches every cell that starts with `{prefix}`, whatever code follows"


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _shell_breadth(pattern: str) -> str | None:
    words = pattern.split()
    if not words or _has_wildcard(words[0]):
        return f"`{pattern}` matches any program"
    program = words[0].rsplit("/", 1)[-1]
    literal = [w for w in words[1:] if not _has_wildcard(w)]
    wild = len(literal) < len(words) - 1
    has_argument = any(not w.startswith("-") for w in literal)
    if has_argument or (not wild and len(words) > 1):
        return None
    if program in _RUNS_ANYTHING:
        return f"`{pattern}` lets `{program}` run any code or program"
    if program in _TOUCHES_ANY_FILE and wild:
        return f"`{pattern}` lets `{program}` act on any file or address"
    return None


def _shell_pattern(command: str) -> str:
    words = _words(command)
    if not words:
        return command
    base = ShellAction(command).suggested_pattern()
    if broad_reason("shell", base) is None:
        return base
    # The program with its options up to the first argument: ``python script.py *``, ``rm -rf build *``.
    for k, word in enumerate(words[1:], 1):
        if not word.startswith("-"):
            if any(shlex.quote(w) != w for w in words[: k + 1]):
                break  # quoted words: only the command as written matches it
            head = " ".join(words[: k + 1])
            narrow = f"{_escape(head)} *" if k + 1 < len(words) else head
            if broad_reason("shell", narrow) is None:
                return narrow
            break
    return command  # spelled out in full


__all__ = ["FOLDER_CLASSES", "broad_reason", "pattern_note", "proposed_pattern", "rule_words"]
