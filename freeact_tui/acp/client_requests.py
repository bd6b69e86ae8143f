"""Every request the agent sends to the client (``fs/*``, ``session/request_permission``), bounded; every
notification to a client that is gone, dropped.

A client that never answers must not hold a turn forever: each request waits at most its bound, then
fails with a line that says so (the file tools tell the model, a permission request rejects), and a
``session/cancel`` interrupts the wait (each one is awaited in a task the cancel cancels: the turn's, or
the session's ``asking`` tasks). The bounds are one table; an architecture test checks that every
client-bound request in ``acp/`` goes through ``ask_client``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any, TypeVar

from acp.interfaces import Client

from freeact_tui.project.config import Config

logger = logging.getLogger(__name__)

T = TypeVar("T")

FS_TIMEOUT = 30.0
"""Seconds for ``fs/read_text_file`` and ``fs/write_text_file``: an editor answers them at once."""
DECISION_TIMEOUT = 1800.0
"""Seconds for a permission request (an action, the folder's trust) when the config sets no
``approval_timeout``: a person answers it, but a client that never does must not hold the turn forever."""


class ClientTimeout(Exception):
    """The client did not answer a request within its bound; ``str(error)`` says which and how long."""


def decision_bound(config: Config) -> float:
    """How long a permission request waits: the config's ``approval_timeout``, else ``DECISION_TIMEOUT``."""
    return config.approval_timeout if config.approval_timeout is not None else DECISION_TIMEOUT


async def ask_client(request: Awaitable[T], seconds: float, what: str) -> T:
    """``request`` (a call of the client's method) answered within ``seconds``.

    Raises:
        ClientTimeout: no answer in time (the request is abandoned; a late answer is dropped).
        asyncio.CancelledError: the wait was cancelled (``session/cancel``, the session closed).
    """
    try:
        return await asyncio.wait_for(request, seconds)
    except TimeoutError:
        raise ClientTimeout(f"the client did not answer {what} within {seconds:g} s") from None


class ClientLink:
    """The client's connection as the server uses it: ``session/update`` to a client that has gone away (it
    closed stdin while a turn, a replay or an announcement was sending) is dropped with one info line, as
    the transport drops what it cannot write; a client gone is a normal end, not an error. Everything else
    is the connection's own (requests fail as they do, and are bounded by ``ask_client``)."""

    def __init__(self, conn: Client) -> None:
        self._conn = conn
        self._told = False

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        try:
            await self._conn.session_update(session_id=session_id, update=update, **kwargs)
        except ConnectionError as exc:
            if not self._told:
                self._told = True
                logger.info("the client has gone (%s): session updates are dropped", exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


__all__ = ["DECISION_TIMEOUT", "FS_TIMEOUT", "ClientLink", "ClientTimeout", "ask_client", "decision_bound"]
