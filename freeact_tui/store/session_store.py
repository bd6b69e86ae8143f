"""All sessions under one sessions dir: open, create, resolve an id prefix, list, delete."""

from __future__ import annotations

import builtins
import shutil
from pathlib import Path

from freeact_tui.store import lock as session_lock
from freeact_tui.store.ids import (
    AmbiguousSessionId,
    InvalidSessionId,
    SessionNotFound,
    new_session_id,
    validate_session_id,
)
from freeact_tui.store.index import SessionIndex, SessionInfo, is_session_id, session_id_problem
from freeact_tui.store.session import Session

_MIN_PREFIX = 4


class SessionStore:
    """All sessions under one sessions dir.

    Args:
        root: The sessions dir (``Config.resolved_sessions_dir()``).
        fsync: Passed on to every ``Session``.
    """

    def __init__(self, root: Path, *, fsync: bool = True) -> None:
        # Absolute: the index derives a freeact session's cwd from this path, and a relative one
        # (".freeact/sessions") would be cached as "." and never match a working dir again.
        self.root = Path(root).expanduser().absolute()
        self._fsync = fsync
        self._index = SessionIndex(self.root)

    def session(self, session_id: str) -> Session:
        """The session with this full id (it need not exist yet).

        Raises:
            InvalidSessionId: ``session_id`` is not a UUID.
        """
        return Session(self.root, session_id, fsync=self._fsync)

    def new_session(self) -> Session:
        """A session with a fresh id (nothing is written until the first append)."""
        return self.session(new_session_id())

    def resolve(self, id_or_prefix: str) -> str:
        """The full id of an existing session, from its id or a unique prefix of at least 4 characters.

        Raises:
            InvalidSessionId: not a UUID and not a plausible prefix (hex digits and dashes).
            SessionNotFound: no session matches.
            AmbiguousSessionId: the prefix matches several sessions.
        """
        given = id_or_prefix.strip()
        if is_session_id(given) and given in self._index.ids():
            return given  # a whole id of any form (freeact's are not always UUIDs); never a symlink
        # UUIDs are stored in lower case; other ids keep their case.
        prefix = given.lower() if not given.strip("0123456789abcdefABCDEF-") else given
        if len(prefix) < _MIN_PREFIX or session_id_problem(prefix) is not None:
            raise InvalidSessionId(
                f"Invalid session id {id_or_prefix!r}: expected a session id or a unique prefix of it "
                f"(at least {_MIN_PREFIX} characters, no path separators, not starting with a dot)"
            )
        matches = sorted(i for i in self._index.ids() if i.startswith(prefix) and (self.root / i).is_dir())
        if not matches:
            raise SessionNotFound(f"No session matches {id_or_prefix!r} in {self.root}")
        if len(matches) > 1:
            shown = ", ".join(matches[:5]) + (", …" if len(matches) > 5 else "")
            raise AmbiguousSessionId(f"Session id prefix {id_or_prefix!r} is ambiguous: {shown}")
        return matches[0]

    def list(self) -> builtins.list[SessionInfo]:
        """All sessions with a history, newest first (from metadata; histories are not parsed)."""
        return self._index.infos()

    def latest(self, cwd: Path | None = None) -> SessionInfo | None:
        """The most recently updated session, restricted to sessions started in ``cwd`` if given."""
        return self._index.latest(cwd)

    def delete(self, session_id: str) -> None:
        """Delete a session dir with everything in it.

        Raises:
            InvalidSessionId: ``session_id`` is not a UUID.
            SessionNotFound: there is no such session.
            SessionLocked: the session is open in another live process (nothing is removed).
        """
        target = self.root / validate_session_id(session_id)
        if target.is_symlink() or not target.is_dir():
            raise SessionNotFound(f"No session {session_id} in {self.root}")
        # Taking the lock first means a session open in another terminal is never pulled from
        # under its writer; a stale lock (its process gone) is taken over and removed with the dir.
        session_lock.acquire(target)
        shutil.rmtree(target)
