"""The session index: a small ``meta.json`` per session dir, so listing never parses history files.

``meta.json`` records what a listing shows (title, times, cwd, model, message count, subagents) and
how far into ``main.jsonl`` it has read (``indexed_bytes`` plus the bytes just before that offset).
When ``main.jsonl`` changed since, only the unread tail is scanned; a file that shrank or was
rewritten (or a session dir written by freeact, which has no ``meta.json``) is scanned once in full.

A listing also keeps every session's metadata in one file, ``.index.json`` in the sessions dir, keyed
by the identity, size, modification and change times of its ``main.jsonl`` and ``meta.json``: a listing of a thousand
sessions then reads one file and stats two per session. An entry whose files changed (another process
appended, rewrote, damaged or renamed them) is read again from ``meta.json``; a session dir that is
gone drops out; a damaged or foreign index file (a FIFO, a device, a link, a file past ``MAX_INDEX_BYTES``)
is rebuilt.

The index is a cache, so it is never trusted where a trust check covers the store (a project's
``.freeact/sessions``, where a clone or a pull may plant it, and which the trust digest leaves out): there
it is neither read nor written, and a listing reads each session's ``meta.json`` as the check read it.

Every session file is read through ``checked_read``: in a project's store, only as the trust check read it.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from freeact_tui.project import paths, trusted
from freeact_tui.project.trust import note_own_writes
from freeact_tui.store import checked_read
from freeact_tui.store.envelope import MAX_LINE_BYTES, EnvelopeError, decode_envelope
from freeact_tui.store.event_record import EVENT_KEY, is_event_record
from freeact_tui.store.prompt_record import split_prompt
from freeact_tui.text.safe import one_line
from freeact_tui.text.userwords import user_words

MAIN_FILE = "main.jsonl"
META_FILE = "meta.json"
INDEX_FILE = ".index.json"  # a leading dot: never a session id
TOOL_RESULTS_DIR = "tool-results"
REWOUND_DIR = "rewound"  # histories before each rewind (store.rewind_file)
TITLE_MAX = 80
MAX_INDEX_BYTES = 64 * 1024 * 1024  # the listing's cache; a bigger one is rebuilt, never read
_META_VERSION = 2  # 2: event records are not counted as messages (``event_records``)
_TAIL_BYTES = 32  # enough to include a line's microsecond timestamp, so a rewritten prefix is noticed

_UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_AGENT_RE = re.compile(r"main|sub-[A-Za-z0-9_-]{1,64}")


# Longer ids are refused: a session dir's name must fit in every file system's name limit.
MAX_SESSION_ID = 200


def session_id_problem(name: str) -> str | None:
    """Why ``name`` cannot name a session dir (``None``: it can).

    Any id freeact accepts works (its docs use ``countries-session``), except what would leave the
    store or hide in it: path separators, ``.``/``..``, a leading dot, NUL and other control characters.
    """
    if not isinstance(name, str) or not name:
        return "it is empty"
    if len(name) > MAX_SESSION_ID:
        return f"it is longer than {MAX_SESSION_ID} characters"
    if "/" in name or "\\" in name:
        return "it contains a path separator"
    if name.startswith("."):
        return "it starts with a dot (`.`, `..` and hidden names are not session ids)"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "it contains a control character"
    if name != name.strip():
        return "it starts or ends with white space"
    return None


def is_uuid(name: str) -> bool:
    """Whether ``name`` is a UUID in the usual dashed form (any case)."""
    return _UUID_RE.fullmatch(name.lower()) is not None


def is_session_id(name: str) -> bool:
    """Whether ``name`` can be a session dir's name (a UUID is canonical only in lower case)."""
    if is_uuid(name):
        return _UUID_RE.fullmatch(name) is not None
    return session_id_problem(name) is None


def is_agent_id(name: str) -> bool:
    """Whether ``name`` is ``main`` or a subagent id (``sub-…``) that is safe as a file stem."""
    return _AGENT_RE.fullmatch(name) is not None


def make_title(text: str) -> str:
    """The user's words (no note or shell output the app put before them) as one line of at most
    ``TITLE_MAX`` characters, plain (no markdown marks), cut between words; stored as written, made
    visible where it is drawn."""
    return one_line(user_words(text), TITLE_MAX)


def prompt_text(message: dict[str, Any]) -> str | None:
    """The user prompt text of a serialized request message (``None`` if it has no user prompt)."""
    if message.get("kind") != "request":
        return None
    event = (message.get("metadata") or {}).get(EVENT_KEY) if isinstance(message.get("metadata"), dict) else None
    withdrawn = event.get("withdrawn") if isinstance(event, dict) else None
    if isinstance(withdrawn, list) and withdrawn and isinstance(withdrawn[0], dict):
        return prompt_text(withdrawn[0])  # a first turn that failed: what the user asked
    for part in message.get("parts") or ():
        if not isinstance(part, dict) or part.get("part_kind") != "user-prompt":
            continue
        content = part.get("content")
        if isinstance(content, str):
            return split_prompt(content, message.get("metadata")).typed  # the user's words, not the agent's notes
        if isinstance(content, list):
            texts = [c if isinstance(c, str) else str(c.get("content", "")) for c in content if _is_text(c)]
            return " ".join(texts) if any(t.strip() for t in texts) else "(image)"
    return None


def _is_text(item: Any) -> bool:
    return isinstance(item, str) or (isinstance(item, dict) and item.get("kind") == "text")


def _parse_ts(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        ts = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return ts if ts.tzinfo else ts.replace(tzinfo=UTC)


@dataclass(frozen=True)
class SessionInfo:
    """What a session list shows about one session.

    ``message_count`` counts the conversation's messages (not the event records kept beside them);
    ``subagents`` maps a subagent id to its task; ``size_bytes`` counts history files (with the
    archives kept by rewinds) and saved tool results; ``damaged`` is the first damage found in ``main.jsonl`` (``None`` when it loads cleanly).
    """

    id: str
    title: str
    created: datetime
    updated: datetime
    cwd: str | None
    model: str | None
    message_count: int
    subagents: dict[str, str]
    size_bytes: int
    damaged: str | None = None
    launch: dict[str, str] = field(default_factory=dict)
    """What the session's model was started with (``model``, ``action_protocol``, ``base_url``): how to resume it."""
    approval_mode: str | None = None  # an editor's last ACP ``session/set_mode``: how to reopen the session


@dataclass
class SessionMeta:
    """Contents of ``meta.json``: listing fields plus how far ``main.jsonl`` has been indexed.

    ``message_count`` counts the messages of the loaded history (what a rewind's or a rollback's
    ``keep`` counts); ``event_records`` holds the positions among them of event records, which are
    no conversation (``conversation_count``).
    """

    title: str | None = None
    created: datetime | None = None
    updated: datetime | None = None
    cwd: str | None = None
    model: str | None = None
    message_count: int = 0
    subagents: dict[str, str] = field(default_factory=dict)
    event_records: list[int] = field(default_factory=list)
    damaged: str | None = None
    main_size: int = 0
    main_mtime_ns: int = 0
    indexed_bytes: int = 0
    indexed_lines: int = 0
    indexed_tail: str = ""
    launch: dict[str, str] = field(default_factory=dict)
    """The model as the user named it, the action protocol and the base URL of its last turn."""
    approval_mode: str | None = None

    def observe(self, message: dict[str, Any], ts: datetime | None) -> None:
        """Account for one more serialized message of ``main.jsonl``."""
        if is_event_record(message):
            self.event_records.append(self.message_count)
        self.message_count += 1
        if ts is not None:
            self.created = self.created or ts
            self.updated = ts if self.updated is None or ts > self.updated else self.updated
        if self.title is None:
            text = prompt_text(message)
            if text is not None:
                self.title = make_title(text)
        if message.get("kind") == "response" and isinstance(message.get("model_name"), str):
            self.model = self.model or message["model_name"]

    @property
    def conversation_count(self) -> int:
        """How many messages of the conversation the history holds (event records left out)."""
        return self.message_count - len(self.event_records)

    def cut(self, keep: int) -> None:
        """Account for the history cut to its first ``keep`` messages (a rewind or a rollback)."""
        self.message_count = keep
        self.event_records = [at for at in self.event_records if at < keep]

    def mark_indexed(self, offset: int, tail: bytes, lines: int) -> None:
        """Record that ``main.jsonl`` has been read up to ``offset`` (a line boundary)."""
        self.indexed_bytes = offset
        self.indexed_tail = tail[-_TAIL_BYTES:].hex()
        self.indexed_lines = lines

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["created"] = self.created.isoformat() if self.created else None
        data["updated"] = self.updated.isoformat() if self.updated else None
        return {"version": _META_VERSION, **data}

    @classmethod
    def from_json(cls, text: str) -> SessionMeta | None:
        """Parse ``meta.json``; ``None`` when it is unreadable or from another version (then rebuilt)."""
        try:
            return cls.from_dict(json.loads(text))
        except ValueError:
            return None

    @classmethod
    def from_dict(cls, data: Any) -> SessionMeta | None:
        """``to_dict``'s output back; ``None`` for anything else."""
        try:
            if not isinstance(data, dict):
                return None
            data = dict(data)
            if data.pop("version", None) != _META_VERSION:
                return None
            meta = cls(**data)
            meta.created, meta.updated = _parse_ts(data.get("created")), _parse_ts(data.get("updated"))
        except (ValueError, TypeError):
            return None
        ok_types = (
            isinstance(meta.message_count, int)
            and isinstance(meta.launch, dict)
            and all(isinstance(v, str) for v in meta.launch.values())
            and isinstance(meta.subagents, dict)
            and isinstance(meta.event_records, list)
        )
        return meta if ok_types and isinstance(meta.indexed_bytes, int) else None


def read_meta(session_dir: Path) -> SessionMeta | None:
    """The session's ``meta.json`` (``None``: missing, unreadable, or not what the trust check read)."""
    try:
        return SessionMeta.from_json(checked_read.read_bytes(session_dir / META_FILE).decode("utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


def write_meta(session_dir: Path, meta: SessionMeta) -> None:
    """Write ``meta.json`` atomically; a read-only session dir is not an error (the cache is optional).

    In a project's store it is recorded as the app's own write (``trust.note_own_writes``): the trust
    check reads every ``meta.json`` there (the settings a resumed session gives come from it), and only
    an edit by someone else asks again.
    """
    path = session_dir / META_FILE
    try:
        paths.atomic_write_text(path, meta.to_json())
    except OSError:
        return
    if session_dir.parent.name == "sessions" and session_dir.parent.parent.name == paths.FREEACT_DIR_NAME:
        note_own_writes([path])


def scan_lines(meta: SessionMeta, data: bytes, offset: int) -> None:
    """Index the lines in ``data`` (the bytes of ``main.jsonl`` from ``offset`` on) into ``meta``.

    Stops at the first damaged line (recorded in ``meta.damaged``); an unfinished last line is left
    unindexed (it is being written, or was cut off by a crash).
    """
    pos, lines = 0, meta.indexed_lines
    while pos < len(data):
        end = data.find(b"\n", pos)
        complete = end != -1
        stop = end + 1 if complete else len(data)
        raw = data[pos:stop]
        if complete and len(raw) > MAX_LINE_BYTES:
            meta.observe({}, None)  # counted, not parsed: a listing stays fast whatever a line holds
        elif raw.strip():
            try:
                envelope = decode_envelope(raw)
            except EnvelopeError as exc:
                if not complete and exc.bad_json:
                    return
                meta.damaged = f"line {lines + 1}: {exc.reason}"
                return
            marker = envelope["meta"].get("rewind")
            if isinstance(marker, dict) and isinstance(marker.get("keep"), int):
                meta.cut(min(meta.message_count, max(marker["keep"], 0)))  # a rewind cut
            else:
                meta.observe(envelope["message"], _parse_ts(envelope["meta"].get("ts")))
        lines += 1
        pos = stop
        meta.mark_indexed(offset + pos, data[max(0, pos - _TAIL_BYTES) : pos], lines)


def _first_prompt(path: Path) -> str:
    try:
        for raw in checked_read.read_bytes(path).split(b"\n"):
            if raw.strip():
                return make_title(prompt_text(decode_envelope(raw)["message"]) or "")
    except (OSError, EnvelopeError):
        pass
    return ""


def _freeact_project_dir(session_dir: Path) -> str | None:
    # freeact keeps sessions in <project>/.freeact/sessions/, so the project dir is the session's cwd.
    root = session_dir.parent
    if root.name == "sessions" and root.parent.name == ".freeact":
        return str(root.parent.parent)
    return None


def refresh_meta(session_dir: Path, *, write: bool = True) -> SessionMeta:
    """Return up-to-date metadata of one session, scanning only what ``meta.json`` has not seen yet.

    Args:
        session_dir: The session's directory.
        write: Store refreshed metadata back to ``meta.json``.

    Raises:
        ProjectFileChanged: its history is a checked folder's and not what the trust check read.
        OSError: it cannot be read.
    """
    session_dir = session_dir.absolute()
    main = session_dir / MAIN_FILE
    meta = read_meta(session_dir)
    if meta is not None and meta.cwd is not None and not os.path.isabs(meta.cwd):
        # Written by an earlier version from a relative sessions dir: derive the cwd again.
        meta.cwd = _freeact_project_dir(session_dir)
        meta.main_size = -1  # forces the rescan below, which writes the corrected entry back
    try:
        st = main.stat()
        size, mtime_ns = st.st_size, st.st_mtime_ns
    except FileNotFoundError:
        size, mtime_ns = 0, 0
    if meta is not None and (meta.main_size, meta.main_mtime_ns) == (size, mtime_ns):
        return meta
    fresh = meta is None
    data = b""
    if size:
        # Bounded: a concurrent writer may be appending. Not what the trust check read: ``ProjectFileChanged``
        # (nothing of it is listed or written into a meta; the next start asks about it).
        data = checked_read.read_bytes(main)[:size]
    if meta is not None and not meta.damaged and _prefix_unchanged(meta, data):
        scan_lines(meta, data[meta.indexed_bytes :], meta.indexed_bytes)
    else:
        old = meta or SessionMeta(cwd=_freeact_project_dir(session_dir))
        meta = SessionMeta(cwd=old.cwd, model=old.model, subagents=dict(old.subagents), launch=dict(old.launch),
                           approval_mode=old.approval_mode)  # fmt: skip
        scan_lines(meta, data, 0)
    if fresh:
        for sub in sorted(session_dir.glob("sub-*.jsonl")):
            if is_agent_id(sub.stem):
                meta.subagents.setdefault(sub.stem, _first_prompt(sub))
    if meta.created is None or meta.updated is None:
        stamp = datetime.fromtimestamp(mtime_ns / 1e9, UTC) if mtime_ns else datetime.now(UTC)
        meta.created, meta.updated = meta.created or stamp, meta.updated or stamp
    meta.main_size, meta.main_mtime_ns = size, mtime_ns
    if write:
        write_meta(session_dir, meta)
    return meta


def _prefix_unchanged(meta: SessionMeta, data: bytes) -> bool:
    start = meta.indexed_bytes
    if len(data) < start:
        return False
    tail = bytes.fromhex(meta.indexed_tail) if meta.indexed_tail else b""
    return data[start - len(tail) : start] == tail if start else not tail


_INDEX_VERSION = 1


def _stat_key(st: os.stat_result) -> list[int]:
    """What a cached entry is keyed by: the file's identity, size, modification and change times (a swap
    that keeps the size and sets the modification time back still moves the change time, which no user
    can set back)."""
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _meta_file_key(session_dir: str) -> list[int]:
    try:
        st = os.stat(os.path.join(session_dir, META_FILE))
    except OSError:
        return [-1, -1, -1, -1]
    return _stat_key(st)


def _files_key(session_dir: str) -> list[int] | None:
    """The stat keys of ``main.jsonl`` and ``meta.json`` (None: no ``main.jsonl``)."""
    try:
        st = os.stat(os.path.join(session_dir, MAIN_FILE))
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return [*_stat_key(st), *_meta_file_key(session_dir)]


def _size_of(session_dir: Path) -> int:
    total = 0
    with os.scandir(session_dir) as entries:
        for entry in entries:
            if entry.name.endswith(".jsonl") and entry.is_file(follow_symlinks=False):
                total += entry.stat(follow_symlinks=False).st_size
            elif entry.name in (TOOL_RESULTS_DIR, REWOUND_DIR) and entry.is_dir(follow_symlinks=False):
                with os.scandir(entry.path) as results:
                    total += sum(r.stat(follow_symlinks=False).st_size for r in results if r.is_file())
    return total


def session_info(session_id: str, session_dir: Path, meta: SessionMeta, *, size: bool = True) -> SessionInfo:
    """Build the listing entry of a session from its metadata (``size``: count its files' bytes, else 0)."""
    now = datetime.now(UTC)
    return SessionInfo(
        id=session_id,
        title=meta.title or "(no prompt yet)",
        created=meta.created or now,
        updated=meta.updated or now,
        cwd=meta.cwd,
        model=meta.model,
        message_count=meta.conversation_count,
        subagents=dict(meta.subagents),
        size_bytes=_size_of(session_dir) if size else 0,
        damaged=meta.damaged,
        launch=dict(meta.launch),
        approval_mode=meta.approval_mode,
    )


class SessionIndex:
    """All sessions under one sessions dir, listed from their ``meta.json`` files."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def ids(self) -> list[str]:
        """Ids of the session dirs under the root (names that cannot be session ids are ignored)."""
        try:
            with os.scandir(self.root) as entries:
                return [e.name for e in entries if is_session_id(e.name) and e.is_dir(follow_symlinks=False)]
        except FileNotFoundError:
            return []

    def infos(self, *, sizes: bool = True) -> list[SessionInfo]:
        """All sessions that have a history, newest first.

        Args:
            sizes: Count each session's bytes (``size_bytes``; a directory scan per session). Without
                it ``size_bytes`` is 0: for a listing that does not show sizes (``sessions list``).
        """
        infos = []
        cached = self._read_index()
        entries: dict[str, Any] = {}
        root = str(self.root)
        for session_id in self.ids():
            key = _files_key(os.path.join(root, session_id))
            if key is None:
                continue  # no history (yet), or removed while listing
            entry = cached.get(session_id)
            meta = None
            if isinstance(entry, dict) and entry.get("key") == key:
                meta = SessionMeta.from_dict(entry.get("meta"))
            if meta is None:
                try:
                    meta = refresh_meta(self.root / session_id)
                except OSError:
                    continue  # removed or unreadable while listing
                # The history as it was before refresh_meta read it (a writer may have appended since: the
                # next listing sees it), and the meta as refresh_meta left it.
                key = [*key[:4], *_meta_file_key(os.path.join(root, session_id))]
                entry = {"key": key, "meta": meta.to_dict()}
            entries[session_id] = entry
            # The directory is only needed to count sizes: no path is built for each session otherwise.
            infos.append(
                session_info(session_id, self.root / session_id if sizes else self.root, meta, size=sizes)
            )
        if entries != cached:
            self._write_index(entries)
        infos.sort(key=lambda info: info.updated, reverse=True)
        return infos

    def _checked(self) -> bool:
        """Whether this store is a project's (``.freeact/sessions``, or one a trust check covers): then its cache is
        never read nor written, and every session's ``meta.json`` is read as the check read it."""
        in_project = self.root.name == "sessions" and self.root.parent.name == paths.FREEACT_DIR_NAME
        return in_project or trusted.trusted_marks(self.root) is not None

    def _read_index(self) -> dict[str, Any]:
        if self._checked():
            return {}  # a project's cache is the project's: the listing is rebuilt from what the check read
        try:
            data = json.loads(checked_read.read_own(self.root / INDEX_FILE, limit=MAX_INDEX_BYTES))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != _INDEX_VERSION:
            return {}
        sessions = data.get("sessions")
        return sessions if isinstance(sessions, dict) else {}

    def _write_index(self, entries: dict[str, Any]) -> None:
        if self._checked() or not self.root.is_dir():
            return
        text = json.dumps({"version": _INDEX_VERSION, "sessions": entries}, ensure_ascii=False)
        try:
            paths.atomic_write_text(self.root / INDEX_FILE, text)
        except OSError:
            pass  # a read-only sessions dir: the index is a cache

    def latest(self, cwd: Path | None = None) -> SessionInfo | None:
        """The most recently updated session (whose cwd is ``cwd``, when given)."""
        wanted = os.path.normpath(str(cwd)) if cwd is not None else None
        for info in self.infos():
            if wanted is None or (info.cwd is not None and os.path.normpath(info.cwd) == wanted):
                return info
        return None
