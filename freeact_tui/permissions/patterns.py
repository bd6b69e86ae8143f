"""Patterns for remembered decisions: a narrow proposal for a call, and a warning for a broad pattern.

The approval dialog proposes ``proposed_pattern(call)`` for an "always" or "session" rule, and
``broad_reason(kind, pattern)`` (the one check, in ``rulebreadth``) says, in words for the user, why a pattern reaches much further than
the action at hand (``*`` for code is all Python in every future session). A broad "always" rule is
saved only after a second confirmation. For code and scripts the proposal is an exact-cell rule
(``cell:<fingerprint>``): any other pattern on code lets other code through, so it is broad.
"""

from __future__ import annotations

import shlex

from freeact_tui.effects import class_of, class_words
from freeact_tui.permissions.cells import cell_pattern
from freeact_tui.reach import breadth as rulebreadth
from freeact_tui.reach.breadth import (
    EFFECT_PREFIX,
    FOLDER_CLASSES,
    escape_glob,
    has_wildcard,
    is_cell_pattern,
)
from freeact_tui.shell.programs import unwrap
from freeact_tui.shell.words import inspect_command
from freeact_tui.toolcalls import CodeAction, ShellAction, ShellScript, ToolCall


def proposed_pattern(call: ToolCall, effect_class: str | None = None, *, deny: bool = False) -> str:
    """A narrow pattern that matches ``call`` (and actions very much like it), for the dialog to propose.

    A code action whose effects stay inside the folder (``effect_class``, from ``ApprovalRequest``):
    its class (``effects:in-folder``), so that later code that does no more runs unasked. Other code
    or a script: the exact cell (``cell:<fingerprint>``, no other cell matches it). A shell
    command: judged as the project bound judges a pattern (``broad_reason(..., strict=True)``): the
    program (and subcommand) with ``*`` for a program known only to read, else the program with its first
    argument if that is still narrow, else the command spelled out. ``deny``: a rule that refuses the
    program the command runs, however it is wrapped (``LC_ALL=C python3 -c 1`` → ``python3 *``; a deny
    rule matches through wrappers).
    """
    match call:
        case ShellAction(command=command) if deny:
            inner = unwrap(command).commands
            return ShellAction(shlex.join(inner[-1])).suggested_pattern() if inner else command
        case CodeAction() if effect_class in FOLDER_CLASSES:
            return EFFECT_PREFIX + str(effect_class)
        case CodeAction(code=text) | ShellScript(script=text):
            return cell_pattern(text)
        case ShellAction(command=command):
            return _shell_pattern(command)
    return call.suggested_pattern()


def exact_pattern(call: ToolCall) -> str:
    """The narrowest rule pattern that allows ``call``: what a refusal message suggests.

    It matches ``call`` and nothing that does more: not the command with other arguments, a
    redirection or another command after it, not another cell. A code action or script: its exact
    cell; a simple shell command: the command with its glob characters escaped; a command with
    redirections, substitutions or several parts: the command itself (only a rule spelling it out in
    full allows such a command); any other call: its subject, escaped.
    """
    match call:
        case CodeAction(code=text) | ShellScript(script=text):
            return cell_pattern(text)
        case ShellAction(command=command) if not inspect_command(command).simple:
            return command
    return escape_glob(call.subject)


def broad_reason(kind: str, pattern: str) -> str | None:
    """``rulebreadth.broad_reason``, with an effect class named in the words of ``freeact_tui.effects``."""
    name = class_of(pattern.strip())
    if name is not None and name not in FOLDER_CLASSES:
        return f"`{pattern.strip()}` lets {class_words(name)} run unasked, in every future session"
    return rulebreadth.broad_reason(kind, pattern)


def pattern_note(kind: str, pattern: str) -> str | None:
    """What a pattern matches, where it is not obvious (an exact cell, or code matched on its text)."""
    if is_cell_pattern(pattern.strip()):
        return "Matches only this exact cell (comments and formatting aside); any other code asks."
    if (name := class_of(pattern.strip())) is not None:
        return f"Matches {class_words(name)}, whatever it is written like; anything wider asks."
    if kind in ("code", "script") and not has_wildcard(pattern):
        return "Matches only a cell that is exactly this text."
    return None


def rule_words(kind: str, pattern: str, effect: str = "allow") -> str:
    """A rule in words, as the rules screen, the dialog and ACP's options name it (never a hash)."""
    text = pattern.strip()
    if (name := class_of(text)) is not None:
        return class_words(name, effect=effect)
    if is_cell_pattern(text):
        return f"one exact {'script' if kind == 'script' else 'cell'} (comments and formatting aside)"
    noun = rulebreadth.NOUN.get(kind, "action" if kind != "*" else "any action").split(" (")[0]
    return f"{noun}s matching {text}" if kind not in ("read", "write") else f"{kind}s of {text}"


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _shell_pattern(command: str) -> str:
    words = _words(command)
    if not words or not inspect_command(command).simple:
        return command  # a wildcard never allows a redirection or a substitution: only the command itself
    base = ShellAction(command).suggested_pattern()
    if rulebreadth.broad_reason("shell", base, strict=True) is None:
        return base
    # The program with its options up to the first argument: ``python script.py *``, ``rm -rf build *``.
    for k, word in enumerate(words[1:], 1):
        if not word.startswith("-"):
            if any(shlex.quote(w) != w for w in words[: k + 1]):
                break  # quoted words: only the command as written matches it
            head = " ".join(words[: k + 1])
            narrow = f"{escape_glob(head)} *" if k + 1 < len(words) else head
            if rulebreadth.broad_reason("shell", narrow, strict=True) is None:
                return narrow
            break
    return escape_glob(command)  # spelled out in full: no other command matches it


__all__ = ["FOLDER_CLASSES", "broad_reason", "exact_pattern", "pattern_note", "proposed_pattern", "rule_words"]
