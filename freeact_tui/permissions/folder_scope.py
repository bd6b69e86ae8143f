"""Whether a rule means something else in another folder: the one decision of which "always" rules are kept
with the folder they were given in (``PermissionRules.add``; the rules screen says where each applies).

A rule depends on the folder when what it allows is read against the working directory: an exact cell or
any code text (what a cell touches depends on the folder it runs in: its relative paths, ``os.getcwd()``,
what it imports from there); a ``path:`` pattern or a plain read/write pattern not anchored at ``/`` or
``~`` (relative globs match paths inside the folder); a shell command with any word that may name a file
(``reach.globs.shell_path_words``, the matcher's own) not anchored at ``/`` or ``~``, with no such word at
all (``ls``, ``make``, ``pytest`` act on the folder they run in), with a program named by a relative path
(``./build.sh``) or that moves between folders (``cd``); an effect rule of a class that speaks of "this
folder". Refusing or asking about such a thing stays user-wide (a refusal applied in more folders only
asks or refuses more), but for effect classes, whose every effect is of "this folder". Tools and
subagents are named, not found in a folder: user-wide.
"""

from __future__ import annotations

from freeact_tui.effects import class_of
from freeact_tui.reach.breadth import PATH_PREFIX, is_cell_pattern
from freeact_tui.reach.globs import shell_path_words
from freeact_tui.shell.words import command_words, split_command

__all__ = ["FOLDER_FREE", "folder_reason", "folder_relative"]

FOLDER_FREE = frozenset({"computes", "unknown"})
"""The effect classes whose meaning does not depend on the folder (the others speak of "this folder")."""

_ANCHORS = ("/", "~")
_MOVES = frozenset({"cd", "pushd", "popd"})


def _anchored(path: str) -> bool:
    return path.startswith(_ANCHORS)


def _shell_reason(pattern: str) -> str | None:
    """Why a shell pattern's commands depend on the folder they run in, or ``None``."""
    parts = split_command(pattern)
    if not parts:
        return "it names no command"
    for part in parts:
        words = command_words(part)
        if not words:
            return "it names no command"
        program = words[0]
        if program in _MOVES:
            return f"it moves to another folder ({program})"
        if "/" in program and not _anchored(program):
            return f"it runs {program}, found from the folder"
        paths = shell_path_words(part)
        if not paths:
            return f"{program} acts on the folder it runs in"
        relative = next((p for p in paths if not _anchored(p)), None)
        if relative is not None:
            return f"it names {relative} (relative to the folder)"
    return None


def _plain_reason(kind: str, pattern: str) -> str | None:
    """Why a plain (text) pattern of ``kind`` depends on the folder, or ``None``."""
    if kind in ("code", "script"):
        return "code touches what its folder holds"
    if kind == "shell":
        return _shell_reason(pattern)
    if kind in ("read", "write"):
        return None if _anchored(pattern) else f"{pattern} is a path relative to the folder"
    if kind == "*":  # any kind: the reading of every kind it may match
        return _plain_reason("code", pattern)
    return None  # tools and subagents: by name


def folder_reason(kind: str, pattern: str, effect: str = "allow") -> str | None:
    """Why the rule ``(kind, pattern)`` with ``effect`` means something else in another folder (in words for
    the user), or ``None`` when it means the same everywhere. The module docstring gives the structure."""
    if (name := class_of(pattern)) is not None:
        folder_class = kind in ("*", "code") and name not in FOLDER_FREE
        return f"{name} speaks of this folder" if folder_class else None
    if effect != "allow":
        return None
    if is_cell_pattern(pattern):
        return "a cell touches what its folder holds"
    if pattern.startswith(PATH_PREFIX):
        path = pattern[len(PATH_PREFIX) :]
        return None if _anchored(path) else f"{path} is a path relative to the folder"
    return _plain_reason(kind, pattern)


def folder_relative(kind: str, pattern: str, effect: str = "allow") -> bool:
    """Whether a rule means something else in another folder (``folder_reason``): kept with its folder."""
    return folder_reason(kind, pattern, effect) is not None
