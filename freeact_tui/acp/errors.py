"""The JSON-RPC errors the ACP agent answers with, one function per kind, so that every method says the
same thing for the same fault (an unknown session is ``-32602`` on every method)."""

from __future__ import annotations

from acp import RequestError

INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SESSION_UNUSABLE = INVALID_REQUEST
"""A stored session that exists but cannot be used in this process (another process writes it, its history
is damaged): refused when it is opened (load, resume, fork), never accepted and then failing at a prompt."""


def invalid_params(message: str) -> RequestError:
    return RequestError(INVALID_PARAMS, message)


OPEN_HINT = "open in this process: call session/new, session/load or session/resume first"


def unknown_session(session_id: str, where: str = OPEN_HINT) -> RequestError:
    """The one answer for a session id no method can act on (prompt, load, resume, fork, close, set_*)."""
    return invalid_params(f"no session {session_id!r} {where}")


def session_unusable(session_id: str, why: str) -> RequestError:
    """The one answer for a session that cannot be used here (load, resume, fork, prompt): ``why`` in one
    line, and ``data.sessionId``."""
    return RequestError(SESSION_UNUSABLE, f"session {session_id} cannot be used here: {why}", {"sessionId": session_id})


def internal_error(message: str) -> RequestError:
    return RequestError(INTERNAL_ERROR, message)


__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "SESSION_UNUSABLE",
    "internal_error",
    "invalid_params",
    "session_unusable",
    "unknown_session",
]
