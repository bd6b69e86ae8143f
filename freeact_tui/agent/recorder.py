"""An agent's history and its session file: append, roll back, sync, and keep big results out.

Every message goes to memory and (with persistence on) to the session's JSONL file at once.
A failed model request rolls both back. Results over ``inline_max_bytes`` are saved under the
session's ``tool-results/`` and replaced by a head/tail preview that names the file.

After a compaction the history in memory (what the model sees) differs from the file (everything,
plus the compaction record): ``stored`` is the file's messages, ``positions`` maps each message in
memory to its line in the file, and ``generation`` changes whenever the history is rewritten.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelRequest

from freeact_tui.actions.ports import Overflow
from freeact_tui.store.compaction import compacted_view, compaction_info
from freeact_tui.store.event_record import event_of
from freeact_tui.store.history import spent_history
from freeact_tui.store.index import REWOUND_DIR
from freeact_tui.store.lock import SessionLocked
from freeact_tui.store.rewind_file import RewindMark
from freeact_tui.store.sessions import Session, SessionDamaged, SessionStore

logger = logging.getLogger(__name__)

MAIN_AGENT = "main"
"""The agent whose turns are the session's (a subagent's run inside one of them)."""

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
        self._flushing: set[asyncio.Future[None]] = set()
        """Flushes of the session file still running in a thread (``flushed``)."""
        self.stored: list[ModelMessage] = []
        """Every message of the file, compaction records included (what the log shows)."""
        self.positions: list[int] = []
        self.generation = 0
        self.fresh_from = 0
        """Index of the first message recorded since the history was last rewritten (usage figures are current)."""
        self.load_damage: SessionDamaged | None = None
        self.locked: SessionLocked | None = None
        """Another process writes this session: it is read-only here."""
        self._undo: tuple[list[ModelMessage], list[int]] | None = None
        self.rewind_note: str | None = None
        """The note of a rewind the model has not been told of yet (the file ends with the marker)."""
        self.rewinds: list[RewindMark] = []
        """Where the conversation was rewound: marks at positions in ``stored``, oldest first."""

    def load(self) -> None:
        """Load the stored history of this agent (a damaged file, or a session another process
        writes, leaves the session read-only)."""
        if self.session is not None and self.session.exists():
            try:
                self.session.lock()
            except SessionLocked as exc:
                self.locked = exc
            loaded = self.session.load(self.agent_id)
            self.stored = list(loaded.messages)
            self.history, self.positions = compacted_view(self.stored)
            compacted = any(compaction_info(m) is not None for m in self.stored)
            self.fresh_from = len(self.history) if compacted else 0
            self.generation += 1
            self.load_damage = loaded.damage
            self.rewind_note = loaded.rewind_note
            self.rewinds = list(loaded.rewinds)

    def past_responses(self, *, subagents: bool) -> Iterator[ModelMessage]:
        """The stored messages, those a rewind withdrew (their tokens were spent all the same: live, a
        rewind takes nothing off the totals), and with ``subagents`` the session's subagents': their
        usage is the session's."""
        rewound = self.session is not None and (self.session.dir / REWOUND_DIR).is_dir()
        if self.session is not None and (self.rewinds or rewound):
            yield from spent_history(self.session.history_path(self.agent_id))
        else:
            yield from self.stored
        if subagents and self.session is not None and self.session.exists():
            for sub_id in self.session.subagent_ids():
                try:
                    yield from self.session.load(sub_id).messages
                except (ValueError, OSError):  # a damaged subagent file: its usage is not counted
                    continue

    def record(self, message: ModelMessage) -> None:
        if self.locked is not None:
            raise self.locked
        if len(self.positions) != len(self.history):  # the history was set from outside (SDK users, tests)
            self.positions = list(range(len(self.history)))
            self.stored = list(self.history)
        self.history.append(message)
        self.positions.append(len(self.stored))
        self.stored.append(message)
        if self.session is not None:
            self.session.append([message], agent_id=self.agent_id)

    def turn_opened(self) -> None:
        """The main agent's turn opens: noted in the session (``store.open_turn``) for a copy taken meanwhile."""
        if self.session is None or self.locked is not None or self.agent_id != MAIN_AGENT:
            return
        try:
            self.session.turn_opened()
        except OSError as exc:  # only a fork taken during the turn would copy it whole
            logger.warning("the open turn of session %s could not be noted: %s", self.session.id, exc)

    def turn_closed(self) -> None:
        """The turn ``turn_opened`` noted has ended."""
        if self.session is None or self.locked is not None or self.agent_id != MAIN_AGENT:
            return
        try:
            self.session.turn_closed()
        except OSError as exc:
            logger.warning("the end of a turn of session %s could not be noted: %s", self.session.id, exc)

    def record_event(self, record: ModelRequest) -> None:
        """Append an event record (``store/event_record.py``): to the file and the transcript, never to
        the history the model sees."""
        if self.locked is not None:
            raise self.locked
        if len(self.positions) != len(self.history):
            self.positions = list(range(len(self.history)))
            self.stored = list(self.history)
        self.stored.append(record)
        if self.session is not None:
            self.session.append([record], agent_id=self.agent_id)

    def cut_lines(self, keep: int) -> int:
        """How many of the file's messages stay when the history is cut to its first ``keep`` messages.

        After a compaction the history's indices are not the file's lines: the cut is mapped through
        ``positions``.
        """
        if len(self.positions) != len(self.history):
            self.positions = list(range(len(self.history)))
            self.stored = list(self.history)
        return self.positions[keep] if keep < len(self.positions) else len(self.stored)

    def cut(self, keep: int, mark: RewindMark | None = None) -> int:
        """Drop the history from message ``keep`` on (a rewind); return how many file lines stay.

        The file's messages (what the log shows) are cut at the same point (``cut_lines``); ``mark``
        records the rewind for the log.
        """
        lines = self.cut_lines(keep)
        del self.history[keep:]
        del self.positions[keep:]
        del self.stored[lines:]
        self.rewinds = [m for m in self.rewinds if m.at <= lines]
        if mark is not None:
            self.rewinds.append(mark)
        self.fresh_from = min(self.fresh_from, keep)
        self.generation += 1
        return lines

    def compact(self, record: ModelRequest, head: ModelRequest, cut: int) -> None:
        """Replace the messages before ``cut`` by ``head`` and append the compaction ``record`` to the file.

        A rollback in the same turn restores the history as it was before (see ``rollback``).
        """
        if len(self.positions) != len(self.history):
            self.positions = list(range(len(self.history)))
            self.stored = list(self.history)
        if self._undo is None:
            self._undo = (list(self.history), list(self.positions))
        if self.session is not None:
            self.session.append([record], agent_id=self.agent_id)
        position = len(self.stored)
        self.stored.append(record)
        self.history = [head, *self.history[cut:]]
        self.positions = [position, *self.positions[cut:]]
        self.fresh_from = len(self.history)
        self.generation += 1

    def settle(self) -> None:
        """The turn is over: its compactions can no longer be rolled back."""
        self._undo = None

    def rollback(self, count: int) -> None:
        """Keep the first ``count`` messages, in memory and in the file.

        ``count`` refers to the history as it was when the turn began: a compaction during the turn is
        undone too.
        """
        if self._undo is not None:
            self.history, self.positions = self._undo
            self._undo = None
            self.fresh_from = 0
        if len(self.positions) != len(self.history):
            self.positions = list(range(len(self.history)))
            self.stored = list(self.history)
        dropped = self.positions[count:]
        kept = self.positions[:count]
        keep_lines = min(dropped) if dropped else (max(kept) + 1 if kept else 0)
        if kept and max(kept) >= keep_lines:  # never cut a compaction record the kept messages rely on
            keep_lines = max(kept) + 1
        while not dropped and keep_lines < len(self.stored) and event_of(self.stored[keep_lines]) is not None:
            keep_lines += 1  # the event records after the kept messages stay (an earlier turn's error)
        del self.history[count:]
        del self.positions[count:]
        del self.stored[keep_lines:]
        self.rewinds = [m for m in self.rewinds if m.at <= keep_lines]
        self.fresh_from = min(self.fresh_from, len(self.history))
        self.generation += 1
        if self.session is not None:
            self.session.rollback(keep_lines, agent_id=self.agent_id)

    def close(self) -> None:
        """Release the session's writer lock (if this recorder's session took it)."""
        if self.session is not None:
            self.session.unlock()

    async def sync(self) -> None:
        """Flush the session file to disk (off the event loop); a failure loses only power-loss safety."""
        self.settle()
        if self.session is None:
            return
        flush = asyncio.ensure_future(asyncio.to_thread(self.session.sync))
        self._flushing.add(flush)
        flush.add_done_callback(self._flushing.discard)
        try:
            await asyncio.shield(flush)  # a cancelled turn lets the flush finish (``flushed`` waits for it)
        except (OSError, asyncio.CancelledError):
            pass  # the data is with the OS already

    async def flushed(self) -> None:
        """Wait for the flushes a cancelled turn left running: nothing writes the session after its agent
        stopped (a folder removed right after saw a file appear during its removal)."""
        if self._flushing:
            await asyncio.gather(*self._flushing, return_exceptions=True)

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
