"""An agent's history and its session file: append, roll back, sync, and keep big results out.

Every message goes to memory and (with persistence on) to the session's JSONL file at once.
A failed model request rolls both back. Results over ``inline_max_bytes`` are saved under the
session's ``tool-results/`` and replaced by a head/tail preview that names the file.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic_ai.messages import ModelMessage

from freeact_tui.actions.code import Overflow
from freeact_tui.store.lock import SessionLocked
from freeact_tui.store.sessions import Session, SessionDamaged, SessionStore


class Recorder:
    """History of one agent (the main agent or a subagent) in one session."""

    def __init__(
        self,
        sessions_dir: Path | None,
        session_id: str,
        agent_id: str,
        *,
        inline_max_bytes: int,
        preview_chars: int,
    ) -> None:
        self.agent_id = agent_id
        self.inline_max_bytes = inline_max_bytes
        self.preview_chars = preview_chars
        # Appends go straight to the OS (safe against a killed process); fsync runs once per turn, off the loop.
        self._store = SessionStore(sessions_dir, fsync=False) if sessions_dir is not None else None
        self.session: Session | None = self._store.session(session_id) if self._store else None
        self.history: list[ModelMessage] = []
        self.load_damage: SessionDamaged | None = None
        self.locked: SessionLocked | None = None
        """Another process writes this session: it is read-only here."""

    def load(self) -> None:
        """Load the stored history of this agent (a damaged file, or a session another process
        writes, leaves the session read-only)."""
        if self.session is not None and self.session.exists():
            try:
                self.session.lock()
            except SessionLocked as exc:
                self.locked = exc
            loaded = self.session.load(self.agent_id)
            self.history = list(loaded.messages)
            self.load_damage = loaded.damage

    def record(self, message: ModelMessage) -> None:
        if self.locked is not None:
            raise self.locked
        self.history.append(message)
        if self.session is not None:
            self.session.append([message], agent_id=self.agent_id)

    def rollback(self, count: int) -> None:
        """Keep the first ``count`` messages, in memory and in the file."""
        del self.history[count:]
        if self.session is not None:
            self.session.rollback(count, agent_id=self.agent_id)

    def close(self) -> None:
        """Release the session's writer lock (if this recorder's session took it)."""
        if self.session is not None:
            self.session.unlock()

    async def sync(self) -> None:
        """Flush the session file to disk (off the event loop); a failure loses only power-loss safety."""
        if self.session is None:
            return
        try:
            await asyncio.shield(asyncio.to_thread(self.session.sync))
        except (OSError, asyncio.CancelledError):
            pass  # the data is with the OS already

    def overflow(self, text: str) -> Overflow:
        """Keep large results out of the history: a head/tail preview and the file's path."""
        data = text.encode("utf-8", errors="replace")
        if len(data) <= self.inline_max_bytes:
            return Overflow(text, truncated=False, path=None)
        half = self.preview_chars // 2
        path: Path | None = None
        where = "(not saved: persistence is off)"
        if self.session is not None:
            path = self.session.save_tool_result(text, "txt")
            where = str(path)
        preview = f"{text[:half]}\n\n… [{len(data)} bytes in all; the full output is in {where}] …\n\n{text[-half:]}"
        return Overflow(preview, truncated=True, path=path)


__all__ = ["Recorder"]
