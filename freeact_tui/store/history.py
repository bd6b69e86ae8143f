"""Reading one agent's history file: envelopes decoded, rewind markers applied, damage located.

A missing file is an empty history; a truncated last line (a crash mid-write) is ignored; any other
damage is reported with the file and the line, with everything before it loaded. Every file is read
through ``checked_read`` (a project's store: only as the trust check read it).
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freeact_tui.store import checked_read
from freeact_tui.store.envelope import MAX_LINE_BYTES, EnvelopeError, decode_envelope, shrink_oversized
from freeact_tui.store.ids import SessionDamaged
from freeact_tui.store.index import REWOUND_DIR
from freeact_tui.store.rewind_file import RewindMark, mark_of, marker_keep

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage


@dataclass
class LoadedHistory:
    """A loaded history. With ``damage`` set, ``messages`` holds everything before the damaged line;
    ``truncated_tail`` says an unfinished last line (a crash mid-write) was ignored."""

    messages: list[ModelMessage]
    damage: SessionDamaged | None = None
    truncated_tail: bool = False
    rewind_note: str | None = None
    """The note of a rewind marker that is the history's last record (the model has not seen it yet)."""
    rewinds: list[RewindMark] = field(default_factory=list)
    """Where the history was rewound (marks at positions in ``messages``), oldest first."""



def read_history(path: Path) -> LoadedHistory:
    """Load one history file; a missing file is an empty history.

    Damage is returned (in ``LoadedHistory.damage``), not raised, so that callers can show what loaded.
    """
    # pydantic-ai is imported here, not at module level: listing sessions never needs it.
    import pydantic
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    try:
        data = checked_read.read_bytes(path)
    except FileNotFoundError:
        return LoadedHistory(messages=[])
    except checked_read.ProjectFileChanged as exc:  # nothing of it is used: the session opens read-only
        return LoadedHistory(messages=[], damage=SessionDamaged(path, 1, exc.reason + "; not used"))
    lines = data.split(b"\n")
    payloads: list[Any] = []
    line_numbers: list[int] = []
    last = max((i for i, raw in enumerate(lines) if raw.strip()), default=-1)
    damage: SessionDamaged | None = None
    truncated = False
    note: str | None = None
    marks: list[RewindMark] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            envelope = decode_envelope(raw)
        except EnvelopeError as exc:
            if exc.bad_json and number - 1 == last:
                truncated = True
            else:
                damage = SessionDamaged(path, number, exc.reason)
            break
        keep = marker_keep(envelope)
        if keep is not None:  # a rewind marker: the history is cut back to its first `keep` messages
            mark = mark_of(envelope, payloads[keep:], path.parent)
            del payloads[keep:], line_numbers[keep:]
            marks = [m for m in marks if m.at <= keep] + [mark]
            note = mark.note
            continue
        note = None
        payloads.append(_payload(envelope, raw, number, path))
        line_numbers.append(number)
    try:
        messages = ModelMessagesTypeAdapter.validate_python(payloads)
    except pydantic.ValidationError as exc:
        errors = [e for e in exc.errors() if e["loc"] and isinstance(e["loc"][0], int)]
        bad = min((int(e["loc"][0]) for e in errors), default=0)
        first = next((e for e in errors if e["loc"][0] == bad), exc.errors()[0])
        where = ".".join(str(p) for p in first["loc"][1:])
        reason = f"not a valid message ({where}: {first['msg']})" if where else "not a valid message"
        damage = SessionDamaged(path, line_numbers[bad], reason)
        messages = ModelMessagesTypeAdapter.validate_python(payloads[:bad])
        truncated = False
    marks = [m for m in marks if m.at <= len(messages)]
    return LoadedHistory(
        messages=messages, damage=damage, truncated_tail=truncated, rewind_note=note, rewinds=marks
    )


def _payload(envelope: dict[str, Any], raw: bytes, number: int, path: Path) -> Any:
    """The message of a line's envelope, bounded for the app, the model and the context figure."""
    if len(raw) > MAX_LINE_BYTES:
        log.warning("%s: line %d is %d bytes; its long strings were cut on loading", path, number, len(raw))
        return shrink_oversized(envelope["message"], number, len(raw))
    return envelope["message"]


def read_tail(path: Path, count: int) -> list[ModelMessage] | None:
    """The last ``count`` messages of one history file (fewer if it holds fewer), reading and checking
    only their lines: what a resumed log draws before the whole history is loaded.

    When it is not None, the result is the end of ``read_history(path).messages`` for a file without
    damage before the lines read: a rewind marker among them, or a damaged one, gives None (only the
    whole read can say what they mean); damage before them is the whole read's to find (its messages
    then end there, and the caller compares). A truncated last line is ignored, as the whole read does.
    """
    import pydantic
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    try:
        data = checked_read.read_bytes(path)
    except FileNotFoundError:
        return []
    except checked_read.ProjectFileChanged:
        return None  # the whole read says why
    lines = data.split(b"\n")
    numbered = [(n, raw) for n, raw in enumerate(lines, start=1) if raw.strip()]
    payloads: list[Any] = []
    for position in range(len(numbered) - 1, -1, -1):
        if len(payloads) >= count:
            break
        number, raw = numbered[position]
        try:
            envelope = decode_envelope(raw)
        except EnvelopeError as exc:
            if exc.bad_json and position == len(numbered) - 1:
                continue  # a crash mid-write: ignored, as the whole read ignores it
            return None
        if marker_keep(envelope) is not None:
            return None
        payloads.append(_payload(envelope, raw, number, path))
    payloads.reverse()
    try:
        return ModelMessagesTypeAdapter.validate_python(payloads)
    except pydantic.ValidationError:
        return None


def spent_history(path: Path) -> list[ModelMessage]:
    """Every message ever written to one agent's history file, rewound ones included, each once.

    A rewind archives the whole file (``rewound/<stem>.<n>.jsonl``) and keeps a byte-identical prefix
    of it, so each file in the order written (the archives by ``n``, then the file) adds the lines past
    its common prefix with the one before; markers and damaged lines are skipped. A marker of an
    earlier version left the withdrawn lines in the file itself: they are read there.
    """
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    folder = path.parent / REWOUND_DIR
    numbered = re.compile(rf"{re.escape(path.stem)}\.(\d+)\.jsonl")
    archives = sorted(
        (int(m.group(1)), folder / m.group(0))
        for m in (numbered.fullmatch(name) for name in (os.listdir(folder) if folder.is_dir() else ()))
        if m is not None
    )
    payloads: list[Any] = []
    previous: list[bytes] = []
    for file in [*(p for _, p in archives), path]:
        try:
            lines = [raw for raw in checked_read.read_bytes(file).split(b"\n") if raw.strip()]
        except OSError:
            continue
        shared = next((i for i, (a, b) in enumerate(zip(lines, previous, strict=False)) if a != b), None)
        start = min(len(lines), len(previous)) if shared is None else shared
        for raw in lines[start:]:
            try:
                envelope = decode_envelope(raw)
            except EnvelopeError:
                continue
            if marker_keep(envelope) is None:
                payloads.append(envelope["message"])
        previous = lines
    messages: list[ModelMessage] = []
    for payload in payloads:  # one by one: a message this version cannot read costs only itself
        try:
            messages += ModelMessagesTypeAdapter.validate_python([payload])
        except ValueError:
            continue
    return messages
