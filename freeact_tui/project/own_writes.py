"""The app's own writes into a project, recognized by content (never by place).

The app writes into a trusted project (its sessions in ``.freeact/sessions``, generated APIs in
``.freeact/generated``); those writes must never count as a change of what the user trusted, and
nothing else may hide behind them. So each file the app writes gets an ``OwnMark``: the length and
SHA-256 of every byte in it as the app left it. A file is the app's own while it holds exactly those
bytes: a byte appended by anyone else, a rewrite of the prefix, a truncation, a symlink in its place
all make it foreign again. Files the app appends to (sessions' JSONL) keep one running hash per file
(``AppendHash``), so an append costs the appended bytes, not the whole file.

Checking a mark does not re-read a big file at every start: a mark also keeps the file's inode, size,
modification and change times. Once a file has been seen unchanged well after its last write
(``settled``, as git treats "racily clean" index entries), those four alone prove it unchanged: any
later write moves its change time, which no user can set back. Until then the bytes are hashed.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

# A file whose times are older than this is past the coarse clock of the file system (a tick of a few
# ms): a later write can no longer leave its times as they are.
SETTLE_NS = 2_000_000_000
_CHUNK = 1 << 20

Verdict = Literal["own", "settle", "foreign"]
"""``own``: as the app left it; ``settle``: so, and its mark may now be ``settled``; ``foreign``."""


@dataclass(frozen=True)
class OwnMark:
    """The bytes the app wrote into one file (their length and hash) and the file's stat as it left it."""

    size: int
    sha256: str
    ino: int
    mtime_ns: int
    ctime_ns: int
    settled: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "sha256": self.sha256,
            "ino": self.ino,
            "mtime_ns": self.mtime_ns,
            "ctime_ns": self.ctime_ns,
            "settled": self.settled,
        }

    @classmethod
    def from_json(cls, value: object) -> OwnMark | None:
        """A mark as stored, or ``None`` for anything else (an old or damaged record asks again)."""
        if not isinstance(value, dict):
            return None
        try:
            mark = cls(
                int(value["size"]),
                str(value["sha256"]),
                int(value["ino"]),
                int(value["mtime_ns"]),
                int(value["ctime_ns"]),
                bool(value.get("settled", False)),
            )
        except (KeyError, TypeError, ValueError):
            return None
        return mark

    def same_stat(self, info: os.stat_result) -> bool:
        return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns) == (
            self.ino,
            self.size,
            self.mtime_ns,
            self.ctime_ns,
        )


def mark_of(info: os.stat_result, size: int, digest: str) -> OwnMark:
    """The mark of a file the app has just written: ``size`` bytes hashing to ``digest``, stat ``info``."""
    return OwnMark(size, digest, info.st_ino, info.st_mtime_ns, info.st_ctime_ns)


def _open_regular(path: Path) -> int | None:
    """A read-only descriptor of ``path`` when it is a regular file (never a link, FIFO or device)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def hash_fd(fd: int, limit: int | None = None) -> hashlib._Hash:
    """A running SHA-256 of the first ``limit`` bytes of ``fd`` (all of it when ``None``)."""
    digest = hashlib.sha256()
    offset = 0
    while limit is None or offset < limit:
        want = _CHUNK if limit is None else min(_CHUNK, limit - offset)
        chunk = os.pread(fd, want, offset)
        if not chunk:
            break
        digest.update(chunk)
        offset += len(chunk)
    return digest


def file_mark(path: Path) -> OwnMark | None:
    """The mark of a regular file as it is now (the app just wrote it whole), ``None`` for anything else."""
    fd = _open_regular(path)
    if fd is None:
        return None
    try:
        info = os.fstat(fd)
        digest = hash_fd(fd, info.st_size)
        after = os.fstat(fd)
    finally:
        os.close(fd)
    return mark_of(after, after.st_size, digest.hexdigest()) if after.st_size == info.st_size else None


def verdict(path: Path, mark: OwnMark, now_ns: int) -> Verdict:
    """Whether ``path`` holds exactly the bytes of ``mark`` (see the module docstring)."""
    try:
        info = os.lstat(path)
    except OSError:
        return "foreign"
    if not stat.S_ISREG(info.st_mode) or info.st_size != mark.size:
        return "foreign"
    if mark.settled and mark.same_stat(info):
        return "own"
    fd = _open_regular(path)
    if fd is None:
        return "foreign"
    try:
        same = hash_fd(fd, mark.size + 1).hexdigest() == mark.sha256
        after = os.fstat(fd)
    finally:
        os.close(fd)
    if not same or after.st_size != mark.size:
        return "foreign"
    quiet = now_ns - max(after.st_mtime_ns, after.st_ctime_ns) > SETTLE_NS
    return (
        "settle"
        if quiet
        and (after.st_ino, after.st_mtime_ns, after.st_ctime_ns)
        == (
            info.st_ino,
            info.st_mtime_ns,
            info.st_ctime_ns,
        )
        else "own"
    )


def settled(mark: OwnMark, path: Path) -> OwnMark | None:
    """``mark`` settled on the file's stat as it is now (``verdict`` said ``settle``)."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return replace(mark, ino=info.st_ino, mtime_ns=info.st_mtime_ns, ctime_ns=info.st_ctime_ns, settled=True)


class AppendHash:
    """The running hash of one file the app appends to: every byte in it is the app's own, or it is
    ``foreign`` (then nothing the app appends makes it its own again)."""

    def __init__(self, path: Path, mark: OwnMark | None) -> None:
        """Start from the file as it is: empty or missing, or exactly as ``mark`` says; else foreign."""
        self.path = path
        self.size = 0
        self._hash: hashlib._Hash | None = hashlib.sha256()
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return
        except OSError:
            self._hash = None
            return
        if stat.S_ISREG(info.st_mode) and info.st_size == 0:
            return
        if mark is None or verdict(path, mark, 0) == "foreign":
            self._hash = None
            return
        self.rehash()

    @property
    def foreign(self) -> bool:
        return self._hash is None

    def update(self, data: bytes) -> None:
        """The app appended ``data``."""
        if self._hash is not None:
            self._hash.update(data)
            self.size += len(data)

    def rehash(self) -> None:
        """The app rewrote or cut the file (it held only the app's bytes): hash it afresh."""
        if self._hash is None:
            return
        fd = _open_regular(self.path)
        if fd is None:
            self._hash = None
            return
        try:
            self.size = os.fstat(fd).st_size
            self._hash = hash_fd(fd, self.size)
        finally:
            os.close(fd)

    def mark(self, info: os.stat_result) -> OwnMark | None:
        """The mark of the file now (``info`` its stat just after the app's write), if it is all own."""
        if self._hash is None or info.st_size != self.size:
            return None
        return mark_of(info, self.size, self._hash.hexdigest())


def resume_hash(
    current: AppendHash | None,
    path: Path,
    size: int,
    recorded: Callable[[Path], OwnMark | None],
    *,
    verify: bool = False,
) -> AppendHash:
    """The running hash of a file the app appends to: ``current`` while the file is as it left it
    (``size`` is its size now), else started afresh from the ``recorded`` mark (which hashes the file once);
    ``verify``: afresh in any case (before the app rewrites it: it rewrites only its own bytes)."""
    if current is None or current.size != size or verify:
        return AppendHash(path, recorded(path))
    return current


class OwnLedger:
    """The marks of the app's own writes, as a digest walk asks about them; marks found settled on the
    way are kept in ``settles`` for the caller to store."""

    def __init__(self, marks: dict[str, OwnMark], now_ns: int) -> None:
        self.marks = marks
        self.now_ns = now_ns
        self.settles: dict[str, OwnMark] = {}
        self.seen: list[tuple[str, str]] = []
        """What the walk found of the app's own files (``trusted`` marks by real path), for the caller."""

    def is_own(self, path: Path) -> bool:
        """Whether the app wrote ``path`` and it holds exactly the app's bytes."""
        key = os.path.abspath(path)
        mark = self.marks.get(key)
        if mark is None:
            return False
        seen = verdict(path, mark, self.now_ns)
        if seen == "settle" and (new := settled(mark, path)) is not None:
            self.settles[key] = new
        return seen != "foreign"


__all__ = [
    "SETTLE_NS",
    "AppendHash",
    "OwnLedger",
    "OwnMark",
    "Verdict",
    "file_mark",
    "mark_of",
    "resume_hash",
    "settled",
    "verdict",
]
