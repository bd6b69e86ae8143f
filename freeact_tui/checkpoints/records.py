"""The records of checkpoints: what a checkpoint, a change and a restore are, and their git encoding."""

from __future__ import annotations

import json
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, NamedTuple

from freeact_tui.checkpoints.limits import SkippedFile

# One log record per commit: id, commit time, then the message (label, blank line, JSON body).
LOG_FORMAT = "%H%x1f%ct%x1f%B%x1e"

ChangeStatus = Literal["added", "modified", "deleted"]
STATUS: dict[str, ChangeStatus] = {"A": "added", "M": "modified", "T": "modified", "D": "deleted"}


class FileChange(NamedTuple):
    """One file that differs between two states (``path`` relative to the root, ``/``-separated)."""

    path: str
    status: ChangeStatus


@dataclass(frozen=True)
class Checkpoint:
    """The state of the working directory at one moment (a commit of the shadow repository)."""

    id: str
    label: str
    created: datetime
    meta: dict[str, Any] = field(default_factory=dict, hash=False)
    skipped: tuple[SkippedFile, ...] = ()

    @property
    def short_id(self) -> str:
        return self.id[:10]


@dataclass(frozen=True)
class RestoreResult:
    """What a restore did. ``backup`` holds the state just before it (restore that to undo it)."""

    checkpoint: Checkpoint
    backup: Checkpoint
    restored: tuple[str, ...]
    removed: tuple[str, ...]
    not_restorable: tuple[SkippedFile, ...]


def commit_message(
    label: str, meta: dict[str, Any], skipped: tuple[SkippedFile, ...], created: datetime
) -> str:
    """The shadow commit's message: the label, then the metadata as one JSON object."""
    body = {"meta": meta, "skipped": [[s.path, s.reason] for s in skipped], "ts": created.isoformat()}
    return f"{label}\n\n{json.dumps(body, ensure_ascii=False, default=str)}\n"


def parse_log(record: str) -> Checkpoint:
    """One ``LOG_FORMAT`` record as a Checkpoint (the commit time stands in for a lost timestamp)."""
    commit, ctime, message = record.strip("\n").split("\x1f", 2)
    label, _, rest = message.partition("\n\n")
    body: dict[str, Any] = {}
    with suppress(ValueError):
        body = json.loads(rest) if rest.strip() else {}
    try:
        created = datetime.fromisoformat(body["ts"])
    except (KeyError, TypeError, ValueError):
        created = datetime.fromtimestamp(int(ctime), UTC)
    skipped = tuple(SkippedFile(str(p), str(r)) for p, r in body.get("skipped", []))
    return Checkpoint(commit, label.strip(), created, dict(body.get("meta") or {}), skipped)


def split_z(out: bytes) -> list[str]:
    """NUL-separated git output as strings (undecodable bytes kept as surrogates)."""
    return [item.decode("utf-8", errors="surrogateescape") for item in out.split(b"\0") if item]


def name_status(out: bytes) -> list[tuple[str, str]]:
    """``git diff-tree -z --name-status`` output as (status letter, path) pairs."""
    items = split_z(out)
    return [(items[i][0], items[i + 1]) for i in range(0, len(items) - 1, 2)]


def encode_paths(items: Iterable[str]) -> bytes:
    """Paths as git reads them with ``-z --stdin``."""
    return b"".join(p.encode("utf-8", errors="surrogateescape") + b"\0" for p in items)
