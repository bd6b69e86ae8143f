"""A conversation rewind on disk: the whole history file is archived, then replaced by its kept lines
plus a rewind marker, atomically — so freeact, which loads every line, sees the cut history too.

```
<session>/main.jsonl                 the kept lines (byte-identical) + one marker line
<session>/rewound/main.<n>.jsonl     the file as it was before rewind n, byte for byte
```

The archive lives in a subdirectory: neither this store (which reads ``<session>/<agent>.jsonl``
and globs ``sub-*.jsonl`` at the top level) nor freeact (which opens ``<session>/<agent>.jsonl``)
ever treats it as an agent's history.

Steps, each durable before the next (a crash at any point leaves ``main.jsonl`` either as it was
or as rewound, never damaged; at worst a complete archive of the unchanged file, or a temporary
file that the next rewind removes):

1. ``rewound/.main.<n>.jsonl.tmp`` ← the current bytes; fsync; rename to ``rewound/main.<n>.jsonl``;
   fsync the directory.
2. ``.main.jsonl.rewind.tmp`` ← the kept lines + the marker; fsync; rename over ``main.jsonl``;
   fsync the session directory.

The archive is a copy, not a hard link: with a link, a crash between the link and the rename would
leave the archive sharing ``main.jsonl``'s inode, so later appends and rollbacks would change it.

A marker's envelope ``meta["rewind"]`` is ``{"keep": n, "withdrawn": {"messages": m, "turns": t},
"archive": "rewound/main.<n>.jsonl"}``; markers appended by earlier versions (``{"keep": n}`` after
the withdrawn lines, which then stay in ``main.jsonl``) still load the same way.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freeact_tui.store.envelope import EnvelopeError, decode_envelope
from freeact_tui.store.ids import SessionDamaged
from freeact_tui.store.index import REWOUND_DIR
from freeact_tui.store.meta_keys import COMPACTION_KEY, TEXT_ACTIONS_KEY

REWIND_KEY = "rewind"
"""The envelope ``meta`` key of a rewind marker (see the module doc)."""
_TMP_SUFFIX = ".tmp"


@dataclass(frozen=True)
class RewindMark:
    """Where the conversation was rewound, and what was withdrawn there.

    ``at`` is the number of messages of the loaded history before the mark. ``archive`` is the
    file that keeps the withdrawn messages; None when they stay earlier in the history file itself
    (``in_file``: a marker appended by an earlier version) or were not saved (no session file).
    """

    at: int
    withdrawn_messages: int
    withdrawn_turns: int
    archive: Path | None
    note: str | None = None
    in_file: bool = False

    def summary(self, history_file: str = "main.jsonl") -> str:
        """What was withdrawn and where it is kept, e.g. "2 turns (9 messages) withdrawn; kept in …"."""
        turns = f"{self.withdrawn_turns} turn{'s' * (self.withdrawn_turns != 1)}"
        what = f"{turns} ({self.withdrawn_messages} message{'s' * (self.withdrawn_messages != 1)}) withdrawn"
        if self.archive is not None:
            return f"{what}; kept in {_shown(self.archive)}"
        if self.in_file:
            return f"{what}; they stay earlier in {history_file} (rewound by an earlier version)"
        return f"{what}; not kept (this session is not stored)"

    def describe(self, history_file: str = "main.jsonl") -> str:
        """The line a log or a transcript shows where the rewind happened."""
        return f"The conversation was rewound here: {self.summary(history_file)}."


def _shown(path: Path) -> str:
    """``path`` with the home directory as ``~`` (shorter in a log)."""
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)


def rewind_marker(keep: int, note: str, extra: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
    """A rewind marker's (JSON-able message, extra envelope meta).

    The message is a valid user request holding ``note``, so freeact loads the file; ``extra`` adds
    to ``meta["rewind"]`` (what was withdrawn, where it is kept).
    """
    from pydantic_ai.messages import ModelRequest, UserPromptPart
    from pydantic_core import to_jsonable_python

    message = ModelRequest(parts=[UserPromptPart(note)])
    return to_jsonable_python(message, bytes_mode="base64"), {REWIND_KEY: {"keep": keep, **(extra or {})}}


def conversation_count(messages: list[Any]) -> int:
    """How many of ``messages`` are the conversation's (event records, e.g. a turn's error, are not)."""
    from freeact_tui.store.event_record import is_event_record

    return sum(1 for m in messages if not is_event_record(m))


def is_user_turn(message: Any) -> bool:
    """Whether a serialized message is a user's message that starts a turn."""
    if not isinstance(message, dict) or message.get("kind") != "request":
        return False
    meta = message.get("metadata")
    if isinstance(meta, dict) and (COMPACTION_KEY in meta or TEXT_ACTIONS_KEY in meta):
        return False
    parts = message.get("parts")
    return isinstance(parts, list) and any(
        isinstance(p, dict) and p.get("part_kind") == "user-prompt" for p in parts
    )


def marker_keep(envelope: dict[str, Any]) -> int | None:
    """The number of messages a rewind marker keeps, or None when the envelope is a message."""
    marker = envelope["meta"].get(REWIND_KEY)
    if not isinstance(marker, dict):
        return None
    keep = marker.get("keep")
    return keep if isinstance(keep, int) and keep >= 0 else 0


def marker_note(message: Any) -> str | None:
    """The text of a rewind marker's message (its user prompt)."""
    try:
        return str(message["parts"][0]["content"])
    except (KeyError, IndexError, TypeError):
        return None


def mark_of(envelope: dict[str, Any], dropped: list[Any], session_dir: Path) -> RewindMark:
    """The mark a marker envelope stands for; ``dropped``: the messages it withdrew from the loaded history."""
    marker = envelope["meta"][REWIND_KEY]
    keep = marker_keep(envelope) or 0
    note = marker_note(envelope["message"])
    withdrawn = marker.get("withdrawn")
    archive = marker.get("archive")
    if isinstance(withdrawn, dict) and isinstance(archive, str) and _safe_archive(archive):
        messages, turns = withdrawn.get("messages"), withdrawn.get("turns")
        if isinstance(messages, int) and isinstance(turns, int):
            return RewindMark(keep, messages, turns, session_dir / archive, note)
    return RewindMark(keep, conversation_count(dropped), sum(map(is_user_turn, dropped)), None, note, in_file=True)


def _safe_archive(rel: str) -> bool:
    return re.fullmatch(rf"{REWOUND_DIR}/[A-Za-z0-9_.-]+\.jsonl", rel) is not None and ".." not in rel


@dataclass(frozen=True)
class _Line:
    start: int
    end: int
    message: Any | None  # None: a marker line


def plan_cut(data: bytes, keep: int, path: Path) -> tuple[bytes, list[Any]]:
    """The bytes of the kept lines when the loaded history is cut to its first ``keep`` messages,
    and the serialized messages withdrawn.

    Lines withdrawn by earlier (appended) markers are left out with those markers' own lines kept
    in place; blank lines and a torn last line are left out. Each kept line is byte-identical.

    Raises:
        SessionDamaged: a line before the cut is not a valid envelope.
        ValueError: the history has fewer than ``keep`` messages.
    """
    kept: list[_Line] = []
    pos, number = 0, 0
    messages = 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        stop = len(data) if end == -1 else end + 1
        number += 1
        raw = data[pos:stop]
        if raw.strip():
            try:
                envelope = decode_envelope(raw)
            except EnvelopeError as exc:
                if messages >= keep:
                    break  # damage (or a torn last line) after the cut goes with the withdrawn part
                if exc.bad_json and end == -1:
                    break
                raise SessionDamaged(path, number, exc.reason) from None
            cut = marker_keep(envelope)
            if cut is None:
                kept.append(_Line(pos, stop, envelope["message"]))
                messages += 1
            else:
                count = 0
                for index, line in enumerate(kept):
                    if line.message is not None:
                        if count == cut:
                            del kept[index:]
                            break
                        count += 1
                messages = min(messages, cut)
                kept.append(_Line(pos, stop, None))
        pos = stop
    if messages < keep:
        raise ValueError(f"Cannot keep {keep} messages of {path}: it has only {messages}")
    out: list[bytes] = []
    dropped: list[Any] = []
    count = 0
    for line in kept:
        if line.message is not None:
            count += 1
        if count > keep:
            if line.message is not None:
                dropped.append(line.message)
            continue
        raw = data[line.start : line.end]
        out.append(raw if raw.endswith(b"\n") else raw + b"\n")
    return b"".join(out), dropped


def archive_path(session_dir: Path, stem: str) -> Path:
    """The next free ``rewound/<stem>.<n>.jsonl``."""
    folder = session_dir / REWOUND_DIR
    taken = [0]
    if folder.is_dir():
        pattern = re.compile(rf"{re.escape(stem)}\.(\d+)\.jsonl")
        for entry in os.listdir(folder):
            found = pattern.fullmatch(entry)
            if found:
                taken.append(int(found.group(1)))
    return folder / f"{stem}.{max(taken) + 1}.jsonl"


def remove_leftovers(session_dir: Path, stem: str) -> None:
    """Remove temporary files an interrupted rewind left behind."""
    for folder, name in ((session_dir, f".{stem}.jsonl.rewind"), (session_dir / REWOUND_DIR, f".{stem}.")):
        try:
            entries = os.listdir(folder)
        except FileNotFoundError:
            continue
        for entry in entries:
            if entry.startswith(name) and entry.endswith(_TMP_SUFFIX):
                try:
                    os.unlink(folder / entry)
                except FileNotFoundError:
                    pass


def write_durably(target: Path, data: bytes, *, strict_dir_sync: bool = True) -> None:
    """Write ``data`` to a temporary file beside ``target``, fsync it, rename it over ``target``,
    fsync the directory: ``target`` is the old file or the new one, never a part of either.

    Raises:
        OSError: a step failed; ``target`` is unchanged (the temporary file is removed). Once the
            rename is done, a failed fsync of the directory only raises with ``strict_dir_sync``
            (without it the new file is in place and only its durability against power loss is
            weaker, so the caller must not treat the write as undone).
    """
    tmp = target.with_name(
        f".{target.name}{_TMP_SUFFIX}"
        if target.parent.name == REWOUND_DIR
        else f".{target.stem}.jsonl.rewind{_TMP_SUFFIX}"
    )
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    try:
        fsync_dir(target.parent)
    except OSError:
        if strict_dir_sync:
            raise


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


__all__ = [
    "REWIND_KEY",
    "REWOUND_DIR",
    "RewindMark",
    "archive_path",
    "conversation_count",
    "is_user_turn",
    "mark_of",
    "marker_keep",
    "marker_note",
    "plan_cut",
    "remove_leftovers",
    "rewind_marker",
    "write_durably",
]
