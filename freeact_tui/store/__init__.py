"""Session store: freeact-format JSONL histories, resumable by id, listed from a per-session index.

May import the shared modules (``toolcalls``, ``paths``, ``config``); never ``execution``, ``mcp``,
``actions``, ``agent``, ``tui`` or ``cli``. ``transcript`` is the one walk of stored history that
export and the TUI's replay share.

The public names are imported when first used: ``sessions list`` needs only ``index``, and importing
the rest (the history codec) would cost it a sixth of its time.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOMES = {"SessionIndex": "index", "SessionInfo": "index"}


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module(f"freeact_tui.store.{_HOMES.get(name, 'sessions')}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
