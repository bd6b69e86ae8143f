"""Session store: freeact-format JSONL histories, resumable by id, listed from a per-session index.

May import the shared modules (``toolcalls``, ``paths``, ``config``); never ``execution``, ``mcp``,
``actions``, ``agent``, ``tui`` or ``cli``. ``transcript`` is the one walk of stored history that
export and the TUI's replay share.
"""

from freeact_tui.store.index import SessionIndex, SessionInfo
from freeact_tui.store.sessions import (
    AmbiguousSessionId,
    InvalidSessionId,
    LoadedHistory,
    Session,
    SessionDamaged,
    SessionNotFound,
    SessionStore,
    new_session_id,
    validate_agent_id,
    validate_session_id,
)

__all__ = [
    "AmbiguousSessionId",
    "InvalidSessionId",
    "LoadedHistory",
    "Session",
    "SessionDamaged",
    "SessionIndex",
    "SessionInfo",
    "SessionNotFound",
    "SessionStore",
    "new_session_id",
    "validate_agent_id",
    "validate_session_id",
]
