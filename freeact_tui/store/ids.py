"""Session and agent ids, and the errors of the session store.

Ids are validated before any path is built from them: a session id is any name freeact accepts
that stays inside the store (a UUID, or e.g. ``countries-session``); an agent id is ``main`` or ``sub-…``.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from freeact_tui.store.index import is_agent_id, is_uuid, session_id_problem


class InvalidSessionId(ValueError):
    """A session id (or prefix) that would leave the store; refused before any path is built from it."""


class SessionNotFound(LookupError):
    """No session has this id (or prefix)."""


class AmbiguousSessionId(LookupError):
    """A prefix that matches more than one session."""


class SessionDamaged(Exception):
    """A history line that cannot be loaded; ``str(error)`` names the file and the line.

    Attributes:
        path: The history file.
        line: The 1-based line number.
        reason: What is wrong with the line.
    """

    def __init__(self, path: Path, line: int, reason: str) -> None:
        super().__init__(f"{path}, line {line}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


def validate_session_id(raw: str) -> str:
    """Return the canonical form of a full session id (a UUID in lower case; other ids as given).

    Raises:
        InvalidSessionId: ``raw`` would leave the store (``..``, ``/``, NUL, an absolute path, …).
    """
    if not isinstance(raw, str):
        raise InvalidSessionId(f"Invalid session id {raw!r}: expected a string")
    candidate = raw.strip().lower() if is_uuid(raw.strip()) else raw
    problem = session_id_problem(candidate)
    if problem is not None:
        raise InvalidSessionId(
            f"Invalid session id {raw!r}: {problem}. Use a UUID like {uuid.UUID(int=0)} or a name "
            "of letters, digits, `-` and `_`."
        )
    return candidate


def new_session_id() -> str:
    """A fresh random session id."""
    return str(uuid.uuid4())


def validate_agent_id(raw: str) -> str:
    """Return ``raw`` if it names a history file (``main`` or ``sub-…``).

    Raises:
        ValueError: anything else (it would be used as a file name).
    """
    if not isinstance(raw, str) or not is_agent_id(raw):
        raise ValueError(f"Invalid agent id {raw!r}: expected 'main' or 'sub-<id>'")
    return raw
