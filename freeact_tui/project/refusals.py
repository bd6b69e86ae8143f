"""Project files the app refused to use, and the one line each front end shows for one.

When the app does not use a project file it was about to use (``AGENTS.md``, a skill, a saved tool, a
generated API: changed since the folder was trusted, too big, not a regular file, ...), the user must see
it, not only the log. Every refusal is one ``Refusal``: what the file is to the app, its path, and a
``Reason`` of the one table below (``SAID``: how each is said). ``refusal_of`` turns the error a reader
raised (``files.ProjectFileError``, ``trusted.ProjectFileChanged``: each carries its ``kind``) into one;
``notice`` is the one line every front end shows (the TUI as a notice in its log, ``run`` on stderr, ACP
as an info line of the turn).

Readers report refusals with ``report``; whoever builds what the files go into (the agent's system
prompt) collects them with ``collecting`` and hands them to its front end as events.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType

from freeact_tui.text.safe import visible

log = logging.getLogger(__name__)


class Reason(StrEnum):
    """Why a project file is not used (the ``kind`` of a reader's error)."""

    UNTRUSTED = "untrusted"
    APPEARED = "appeared"
    CHANGED = "changed"
    TOO_BIG = "too-big"
    NOT_REGULAR = "not-regular"
    SYMLINK = "symlink"
    NOT_TEXT = "not-text"
    UNREADABLE = "unreadable"


SAID: Mapping[Reason, str] = MappingProxyType(
    {
        Reason.UNTRUSTED: "the folder is not trusted",
        Reason.APPEARED: "it appeared since the folder was trusted (start again to review it)",
        Reason.CHANGED: "it changed since the folder was trusted (start again to review it)",
        Reason.TOO_BIG: "it is too big",
        Reason.NOT_REGULAR: "it is not a regular file",
        Reason.SYMLINK: "it is a symlink, which is not followed there",
        Reason.NOT_TEXT: "it is not UTF-8 text",
        Reason.UNREADABLE: "it cannot be read",
    }
)
"""How each reason is said (the one table: a new reason is a row here)."""


@dataclass(frozen=True)
class Refusal:
    """One project file the app did not use."""

    what: str
    """What the file is to the app ("project instructions", "skill", "saved tool")."""
    path: Path
    reason: Reason


def refusal_of(what: str, path: Path, error: BaseException) -> Refusal:
    """The refusal a reader's ``error`` stands for (its ``kind``; a decoding error is not text, any other
    error a file that cannot be read)."""
    kind = getattr(error, "kind", None)
    if isinstance(error, UnicodeDecodeError):
        reason = Reason.NOT_TEXT
    else:
        reason = next((r for r in Reason if r.value == kind), Reason.UNREADABLE)
    return Refusal(what, path, reason)


def notice(refusal: Refusal, folder: Path | None = None) -> str:
    """The one line a front end shows for ``refusal`` (the path relative to ``folder`` when inside it,
    every invisible character made visible)."""
    path = refusal.path
    if folder is not None and path.is_absolute() and path.is_relative_to(folder):
        path = path.relative_to(folder)
    return f"{refusal.what} {visible(str(path), multiline=False)} is not used: {SAID[refusal.reason]}."


_collected: ContextVar[list[Refusal] | None] = ContextVar("refusals", default=None)


def report(refusal: Refusal) -> None:
    """A reader did not use a project file: logged, and collected by the ``collecting`` block around it."""
    log.warning("%s", notice(refusal))
    found = _collected.get()
    if found is not None and refusal not in found:
        found.append(refusal)


@contextmanager
def collecting() -> Iterator[list[Refusal]]:
    """Collect the refusals reported in this block (each once), in the order reported."""
    found: list[Refusal] = []
    token = _collected.set(found)
    try:
        yield found
    finally:
        _collected.reset(token)


__all__ = ["SAID", "Reason", "Refusal", "collecting", "notice", "refusal_of", "report"]
