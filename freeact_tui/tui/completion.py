"""What the prompt can complete at the cursor, and the candidates: decisions as data, no widgets.

Public interface:

- ``completion_context(line, row) -> CompletionContext | None``: the text before the cursor on its line
  (``row`` is the cursor's line) says what is being typed: a command name after a leading ``/``
  (``kind="command"``), a session id after ``/resume `` (``"session"``), a path after ``@`` (``"path"``),
  or nothing to complete (``None``: Tab keeps its usual meaning).
- ``command_entries(skills) -> list[Completion]``: every slash command of the one registry
  (``commands.COMMANDS``) and every invocable skill, with its one-line help.
- ``filter_commands(entries, fragment)``: those matching what was typed, best first (the name typed in full,
  a prefix of it, then inside it; only when neither matches, its letters in order).
- ``path_candidates(paths, fragment)``, ``session_candidates(sessions, fragment)``.
- ``common_prefix(texts)``: how far Tab can complete without choosing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from freeact_tui.tui.commands import COMMANDS

CompletionKind = Literal["command", "session", "path"]

_COMMAND = re.compile(r"/(?!/)([^\s/]*)")
_RESUME = re.compile(r"/resume\s+(\S*)", re.IGNORECASE)
_MENTION = re.compile(r"(?:^|\s)@(\S*)$")


@dataclass(frozen=True)
class CompletionContext:
    """What is being completed: ``fragment`` (typed so far) starts at column ``start`` of the cursor's line."""

    kind: CompletionKind
    start: int
    fragment: str


@dataclass(frozen=True)
class Completion:
    """One candidate: ``text`` replaces the fragment; ``label`` and ``help`` are what the menu shows.

    ``runs`` is true for a command that Enter runs at once (a skill waits for its arguments).
    """

    text: str
    label: str
    help: str = ""
    runs: bool = False


def completion_context(line: str, row: int) -> CompletionContext | None:
    """What the text before the cursor (``line``, on line ``row`` of the prompt) asks to complete."""
    if row == 0:
        command = _COMMAND.fullmatch(line)
        if command is not None:
            return CompletionContext("command", 1, command.group(1))
        resume = _RESUME.fullmatch(line)
        if resume is not None:
            return CompletionContext("session", resume.start(1), resume.group(1))
    mention = _MENTION.search(line)
    if mention is not None:
        return CompletionContext("path", mention.start(1), mention.group(1))
    return None


def command_entries(skills: Iterable[tuple[str, str]] = ()) -> list[Completion]:
    """The slash commands (from the registry) and the skills ``/<name> args`` invokes."""
    entries = [Completion(spec.name, spec.usage, spec.description, runs=True) for spec in COMMANDS]
    entries += [Completion(name, f"/{name}", f"Skill: {_one_line(text)}") for name, text in skills]
    return entries


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "no description"


def filter_commands(entries: Sequence[Completion], fragment: str) -> list[Completion]:
    """Entries whose name matches ``fragment``: name prefixes first, then substrings, then subsequences."""
    query = fragment.lower()
    if not query:
        return list(entries)
    ranked: list[tuple[int, int, Completion]] = []
    letters = re.compile(".*?".join(re.escape(c) for c in query))
    for order, entry in enumerate(entries):
        name = entry.text.lower()
        if name == query:  # typed in full: Enter runs what was typed
            rank = -1
        elif name.startswith(query):
            rank = 0
        elif query in name:
            rank = 1
        elif letters.search(name):
            rank = 2
        else:
            continue
        ranked.append((rank, order, entry))
    if any(rank < 2 for rank, _, _ in ranked):  # letters scattered only when nothing matches better
        ranked = [item for item in ranked if item[0] < 2]
    return [entry for _, _, entry in sorted(ranked, key=lambda item: item[:2])]


def path_candidates(paths: Iterable[str], fragment: str, limit: int = 200) -> list[Completion]:
    """Files whose relative path starts with ``fragment`` (case-insensitively), in listing order."""
    query = fragment.lower()
    found: list[Completion] = []
    for path in paths:
        if path.lower().startswith(query):
            found.append(Completion(path, path))
            if len(found) >= limit:
                break
    return found


class SessionLike(Protocol):
    """The attributes of ``store.SessionInfo`` the session candidates read."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def updated(self) -> datetime: ...


def session_candidates(sessions: Iterable[SessionLike], fragment: str) -> list[Completion]:
    """Sessions (newest first, as listed) whose id starts with ``fragment``."""
    query = fragment.lower()
    return [
        Completion(
            s.id, s.id[:8], f"{s.updated:%Y-%m-%d %H:%M}  {_one_line(s.title or '(untitled)')}", runs=True
        )
        for s in sessions
        if s.id.lower().startswith(query)
    ]


def common_prefix(texts: Sequence[str]) -> str:
    """The longest prefix all ``texts`` share (``""`` for none)."""
    if not texts:
        return ""
    first, last = min(texts), max(texts)
    size = 0
    while size < min(len(first), len(last)) and first[size] == last[size]:
        size += 1
    return first[:size]


__all__ = [
    "Completion",
    "CompletionContext",
    "CompletionKind",
    "command_entries",
    "common_prefix",
    "completion_context",
    "filter_commands",
    "path_candidates",
    "session_candidates",
]
