"""One session on disk: its histories (appended, rewound, rolled back), metadata and saved tool results.

```
<sessions_dir>/<session-id>/main.jsonl        one line per pydantic-ai ModelMessage
<sessions_dir>/<session-id>/sub-xxxx.jsonl    one file per subagent
<sessions_dir>/<session-id>/tool-results/     large results moved out of the history
<sessions_dir>/<session-id>/meta.json         our listing cache (freeact ignores it)
<sessions_dir>/<session-id>/rewound/          histories as they were before each rewind (``rewind_file``)
```

One process writes a session at a time (``store.lock``); any number may read it.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from freeact_tui.project.own_writes import AppendHash, resume_hash
from freeact_tui.project.paths import FREEACT_DIR_NAME
from freeact_tui.project.trust import note_own_writes, own_mark, store_own_marks
from freeact_tui.store import checked_read, open_turn, rewind_file
from freeact_tui.store import lock as session_lock
from freeact_tui.store.envelope import EnvelopeError, decode_envelope, encode_envelope, utc_now_ts
from freeact_tui.store.history import LoadedHistory, read_history
from freeact_tui.store.ids import SessionDamaged, SessionNotFound, validate_agent_id, validate_session_id
from freeact_tui.store.index import (
    MAIN_FILE,
    TOOL_RESULTS_DIR,
    SessionInfo,
    SessionMeta,
    is_agent_id,
    make_title,
    prompt_text,
    refresh_meta,
    session_info,
    write_meta,
)
from freeact_tui.store.rewind_file import REWOUND_DIR, RewindMark, marker_keep, rewind_marker

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

_META_WRITE_INTERVAL = 1.0  # seconds; meta.json is a cache that readers bring up to date themselves


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


# fdatasync still persists the data and the new size, but skips the mtime-only journal commit.
_sync = getattr(os, "fdatasync", os.fsync)


def _open_history(path: Path) -> int:
    """A descriptor of the history ``path`` for appending (created if missing), never blocking: a FIFO or a
    device planted as a history is refused on the descriptor (``ProjectFileError``), nothing written to it."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
    if (what := checked_read.kind(os.fstat(fd).st_mode)) is not None:
        os.close(fd)
        raise checked_read.ProjectFileError(path, f"{what}, not a regular file")
    return fd


def _ext(ext: str) -> str:
    clean = ext.lower().lstrip(".")
    return clean if clean.isascii() and clean.isalnum() and len(clean) <= 16 else "bin"


class Session:
    """One session: its histories (main agent and subagents), metadata and saved tool results.

    Args:
        root: The sessions dir.
        session_id: A full session id (validated).
        fsync: ``fsync`` the history after every message (off only for throw-away sessions/benchmarks).

    Raises:
        InvalidSessionId: ``session_id`` is not a UUID.
    """

    def __init__(self, root: Path, session_id: str, *, fsync: bool = True) -> None:
        self.id = validate_session_id(session_id)
        self.dir = Path(root) / self.id
        self._fsync = fsync
        self._meta: SessionMeta | None = None
        self._meta_dirty = False
        self._meta_written = 0.0
        self._checked_tails: set[str] = set()
        self._damage: dict[str, SessionDamaged] = {}
        self._locked = False  # this object took the session's lock (and releases it)
        self._lock_checked = False
        # In a project's store (``.freeact/sessions``) every file the app writes is marked as its own by
        # content (``ownwrites``): the running hash of each history it appends to.
        self.in_project = (
            self.dir.parent.name == "sessions" and self.dir.parent.parent.name == FREEACT_DIR_NAME
        )
        self._own: dict[Path, AppendHash] = {}

    def history_path(self, agent_id: str = "main") -> Path:
        """The JSONL file of one agent (``main`` or a subagent id)."""
        return self.dir / f"{validate_agent_id(agent_id)}.jsonl"

    def exists(self) -> bool:
        """Whether the session has a main history."""
        return (self.dir / MAIN_FILE).is_file()

    def lock(self) -> None:
        """Take the session's writer lock (see ``store.lock``); a session with no files yet needs none.

        Raises:
            SessionLocked: another live process writes this session.
        """
        if self._lock_checked or not self.dir.is_dir():
            return
        self._locked = session_lock.acquire(self.dir)
        self._lock_checked = True
        if self._locked and self.in_project:
            note_own_writes([self.dir / session_lock.LOCK_FILE])

    def unlock(self) -> None:
        """Release the writer lock if this object took it."""
        if self._locked:
            session_lock.release(self.dir)
        self._locked = self._lock_checked = False

    def turn_opened(self) -> None:
        """A turn opens now: where it begins is noted on disk (``store.open_turn``), so that a copy of the
        session (a fork, in any process) leaves it out until ``turn_closed``."""
        self._ensure_dir()
        path = open_turn.mark_open(self.dir)
        if self.in_project:
            note_own_writes([path])

    def turn_closed(self) -> None:
        """The turn ``turn_opened`` noted has ended: the session is at rest (copied whole). A folder the turn
        made and left empty (nothing was recorded) is removed again."""
        open_turn.mark_closed(self.dir)
        with contextlib.suppress(OSError):  # not empty: the session's files stay
            self.dir.rmdir()

    def load(self, agent_id: str = "main") -> LoadedHistory:
        """Load the history of ``agent_id``. A damaged history makes later appends to it fail."""
        history = read_history(self.history_path(agent_id))
        if history.damage is not None:
            self._damage[agent_id] = history.damage
        return history

    def append(self, messages: Sequence[ModelMessage], agent_id: str = "main") -> None:
        """Append messages to a history, one line each, flushed (and fsynced) message by message.

        Raises:
            SessionDamaged: this history was loaded with damage (appending would bury it).
            SessionLocked: another live process writes this session.
            OSError: the file cannot be written.
        """
        from pydantic_core import to_jsonable_python

        path = self.history_path(agent_id)
        if agent_id in self._damage:
            raise self._damage[agent_id]
        if not messages:
            return
        created = self._ensure_dir() or not path.exists()
        self.lock()  # a new session is locked when its directory appears
        fd = _open_history(path)
        try:
            own = self._own_hash(path, os.fstat(fd).st_size, verify=agent_id not in self._checked_tails)
            if agent_id not in self._checked_tails:
                before = os.fstat(fd).st_size
                self._repair_tail(fd)
                self._checked_tails.add(agent_id)
                if own is not None and os.fstat(fd).st_size != before:
                    own.rehash()
            meta = self._current_meta()
            if agent_id == "main" and meta.damaged:
                reason = meta.damaged.split(": ", 1)[-1]
                raise SessionDamaged(path, meta.indexed_lines + 1, reason)
            changed = created
            for message in messages:
                payload = to_jsonable_python(message, bytes_mode="base64")
                line = encode_envelope(payload, utc_now_ts())
                _write_all(fd, line)
                if own is not None:
                    own.update(line)
                if self._fsync:
                    _sync(fd)
                now = datetime.now(UTC)
                if agent_id == "main":
                    had_title = meta.title is not None
                    meta.observe(payload, now)
                    changed |= not had_title and meta.title is not None
                else:
                    meta.updated = now
                    if agent_id not in meta.subagents:
                        meta.subagents[agent_id] = make_title(prompt_text(payload) or "")
                        changed = True
            if agent_id == "main":
                st = os.fstat(fd)
                meta.mark_indexed(st.st_size, line, meta.indexed_lines + len(messages))
                meta.main_size, meta.main_mtime_ns = st.st_size, st.st_mtime_ns
            self._note_own(own, os.fstat(fd))
        finally:
            os.close(fd)
        if created and self._fsync:
            self._fsync_dir()
        self._meta_dirty = True
        if changed or time.monotonic() - self._meta_written >= _META_WRITE_INTERVAL:
            self.flush_meta()

    def rewind(self, keep: int, note: str, agent_id: str = "main") -> RewindMark:
        """Cut the history back to its first ``keep`` messages (as loaded now, earlier markers applied).

        The whole file is first archived byte for byte as ``rewound/<agent>.<n>.jsonl``; then the kept
        lines (byte-identical) and a rewind marker replace it atomically (see ``store.rewind_file``),
        so any reader of the file, freeact included, loads the cut history. The marker is a valid
        user request holding ``note``; it says how much was withdrawn and where it is kept.

        Raises:
            SessionDamaged: this history was loaded with damage, or a line before the cut is damaged.
            SessionLocked: another live process writes this session.
            ValueError: the history has fewer than ``keep`` messages.
            OSError: a file cannot be written (the history is then unchanged).
        """
        path = self.history_path(agent_id)
        if agent_id in self._damage:
            raise self._damage[agent_id]
        self._ensure_dir()
        self.lock()
        rewind_file.remove_leftovers(self.dir, path.stem)
        own = self._own_hash(path, 0, verify=True)
        data = checked_read.read_own(path, follow=True) if path.exists() else b""
        kept, dropped = rewind_file.plan_cut(data, keep, path)
        archive = rewind_file.archive_path(self.dir, path.stem)
        withdrawn = {
            "messages": rewind_file.conversation_count(dropped),
            "turns": sum(map(rewind_file.is_user_turn, dropped)),
        }
        extra = {"withdrawn": withdrawn, "archive": f"{REWOUND_DIR}/{archive.name}"}
        payload, meta_extra = rewind_marker(keep, note, extra)
        line = encode_envelope(payload, utc_now_ts(), meta_extra)
        if not archive.parent.is_dir():
            archive.parent.mkdir(mode=0o700, exist_ok=True)
            rewind_file.fsync_dir(self.dir)
        rewind_file.write_durably(archive, data)
        new = kept + line
        rewind_file.write_durably(path, new, strict_dir_sync=False)  # renamed: the rewind is done
        if own is not None and not own.foreign:  # the archive and the cut hold only the app's bytes
            note_own_writes([archive])
            own.rehash()
            self._note_own(own, path.stat())
        self._checked_tails.add(agent_id)
        if agent_id == "main":
            meta = self._current_meta()
            st = path.stat()
            meta.cut(keep)
            meta.title = meta.title if keep else None
            meta.updated = datetime.now(UTC)
            meta.mark_indexed(len(new), new, new.count(b"\n"))
            meta.main_size, meta.main_mtime_ns = st.st_size, st.st_mtime_ns
            self._meta_dirty = True
            self.flush_meta()
        return RewindMark(keep, withdrawn["messages"], withdrawn["turns"], archive, note)

    def sync(self) -> None:
        """Write pending metadata and ``fsync`` every history of this session.

        Appends reach the OS at once (a killed process loses nothing already appended); this adds
        durability against power loss, for stores opened with ``fsync=False``, e.g. once per turn.
        """
        self.flush_meta()
        if not self.dir.is_dir():
            return
        for path in self.dir.glob("*.jsonl"):
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            try:
                _sync(fd)
            finally:
                os.close(fd)

    def rollback(self, count: int, agent_id: str = "main") -> None:
        """Keep only the first ``count`` messages of a history (drop a failed turn's messages).

        Raises:
            ValueError: ``count`` is negative or larger than the number of messages.
            SessionDamaged: a line before ``count`` is damaged.
        """
        path = self.history_path(agent_id)
        if count < 0:
            raise ValueError("count must be >= 0")
        data = checked_read.read_own(path, follow=True) if path.exists() else b""
        # The cut goes after the last line at which the loaded history (rewind markers applied)
        # holds exactly `count` messages; messages appended since a marker are the ones dropped.
        pos, kept, number = 0, 0, 0
        cut: tuple[int, int] | None = (0, 0) if count == 0 else None
        while True:
            end = data.find(b"\n", pos)
            if end == -1:
                break
            number += 1
            if data[pos:end].strip():
                try:
                    envelope = decode_envelope(data[pos:end])
                except EnvelopeError as exc:
                    if cut is not None:
                        break  # damage after the cut is cut off with the rest
                    raise SessionDamaged(path, number, exc.reason) from None
                keep = marker_keep(envelope)
                kept = min(kept, keep) if keep is not None else kept + 1
            pos = end + 1
            if kept == count:
                cut = (pos, number)
        if cut is None:
            raise ValueError(f"Cannot keep {count} messages of {path}: it has only {kept}")
        pos, number = cut
        if pos == len(data):
            return
        own = self._own_hash(path, 0, verify=True)
        with path.open("r+b") as fh:
            fh.truncate(pos)
            fh.flush()
            os.fsync(fh.fileno())
            st = os.fstat(fh.fileno())
        if own is not None:
            own.rehash()
            self._note_own(own, st)
        self._damage.pop(agent_id, None)
        self._checked_tails.add(agent_id)
        if agent_id == "main":
            meta = self._current_meta()
            meta.cut(count)
            meta.damaged = None
            meta.title = meta.title if count else None
            meta.mark_indexed(pos, data[:pos], number)
            meta.main_size, meta.main_mtime_ns = st.st_size, st.st_mtime_ns
            self._meta_dirty = True
            self.flush_meta()

    def update_meta(
        self,
        *,
        title: str | None = None,
        cwd: str | None = None,
        home: str | None = None,
        model: str | None = None,
        subagent: tuple[str, str] | None = None,
        launch: dict[str, str] | None = None,
        approval_mode: str | None = None,
    ) -> None:
        """Record listing details; ``title`` is only set if the session has none yet.

        Args:
            title: A title (made one line, at most 80 characters).
            cwd: The working directory of the session.
            home: The working directory, recorded only if the session has none yet (a session opened in
                another folder keeps its own; one made by any path, a fork's copy too, gets one).
            model: The model the session talks to.
            subagent: ``(subagent id, task)`` of a started subagent.
            launch: What the model was started with (``SessionMeta.launch``); written only when it changed.
            approval_mode: The approval mode an editor chose (``SessionMeta.approval_mode``).
        """
        self._ensure_dir()
        meta = self._current_meta()
        if cwd is None and meta.cwd is None:
            cwd = home
        changed = any(value is not None for value in (title, cwd, model, subagent, approval_mode))
        if launch is not None and launch != meta.launch:
            meta.launch, changed = dict(launch), True
        if title is not None and meta.title is None:
            meta.title = make_title(title)
        if cwd is not None:
            meta.cwd = cwd
        if model is not None:
            meta.model = model
        if approval_mode is not None:
            meta.approval_mode = approval_mode
        if subagent is not None:
            meta.subagents[validate_agent_id(subagent[0])] = make_title(subagent[1])
        if changed:
            self._meta_dirty = True
            self.flush_meta()

    def flush_meta(self) -> None:
        """Write pending metadata to ``meta.json`` now (appends write it at most once a second)."""
        if self._meta is not None and self._meta_dirty and self.dir.is_dir():
            write_meta(self.dir, self._meta)
            self._meta_dirty = False
            self._meta_written = time.monotonic()

    def save_tool_result(self, content: str | bytes, ext: str = "txt") -> Path:
        """Save a large tool result as ``tool-results/<8 hex>.<ext>`` (mode 0600) and return its path."""
        results = self.dir / TOOL_RESULTS_DIR
        self._ensure_dir()
        results.mkdir(mode=0o700, exist_ok=True)
        data = content.encode("utf-8") if isinstance(content, str) else content
        while True:
            path = results / f"{uuid.uuid4().hex[:8]}.{_ext(ext)}"
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            except FileExistsError:
                continue
            try:
                _write_all(fd, data)
            finally:
                os.close(fd)
            if self.in_project:
                note_own_writes([path])
            return path

    def info(self) -> SessionInfo:
        """The listing entry of this session.

        Raises:
            SessionNotFound: the session has no history.
        """
        if not self.exists():
            raise SessionNotFound(f"No session {self.id}")
        return session_info(self.id, self.dir, self._current_meta(refresh=True))

    def subagent_ids(self) -> list[str]:
        """Ids of the subagents that have a history in this session, in the order they started."""
        on_disk = {p.stem for p in self.dir.glob("sub-*.jsonl") if is_agent_id(p.stem)}
        known = [s for s in self._current_meta().subagents if s in on_disk] if self.exists() else []
        return known + sorted(on_disk - set(known))

    def _current_meta(self, *, refresh: bool = False) -> SessionMeta:
        # The writer's in-memory copy is authoritative; a reader refreshes from disk.
        if self._meta is None or (refresh and not self._meta_dirty):
            self._meta = refresh_meta(self.dir, write=False)
        return self._meta

    def _ensure_dir(self) -> bool:
        created = not self.dir.is_dir()
        if created:
            self.dir.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            self.dir.mkdir(mode=0o700, exist_ok=True)
        return created

    def _own_hash(self, path: Path, size: int, *, verify: bool = False) -> AppendHash | None:
        """The running hash of a history in a project's store (``None`` elsewhere), started afresh from the
        recorded mark (which hashes the file once) when the file is not as this object last left it
        (``size`` is its size now) or before a rewrite (``verify``: the app rewrites only its own bytes)."""
        if not self.in_project:
            return None
        own = self._own[path] = resume_hash(self._own.get(path), path, size, own_mark, verify=verify)
        return own

    def _note_own(self, own: AppendHash | None, info: os.stat_result) -> None:
        """Record a history the app just wrote as its own, when it holds only the app's bytes."""
        if own is not None and (mark := own.mark(info)) is not None:
            store_own_marks({own.path: mark})

    def _fsync_dir(self) -> None:
        fd = os.open(self.dir, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def _repair_tail(self, fd: int) -> None:
        """Make the file end with a newline: keep a complete unterminated last line, drop a torn one."""
        size = os.fstat(fd).st_size
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return
        start = size
        while start > 0:
            chunk = os.pread(fd, min(65536, start), max(0, start - 65536))
            newline = chunk.rfind(b"\n")
            if newline != -1:
                start = start - len(chunk) + newline + 1
                break
            start -= len(chunk)
        try:
            decode_envelope(os.pread(fd, size - start, start))
        except EnvelopeError:
            os.ftruncate(fd, start)
        else:
            _write_all(fd, b"\n")
