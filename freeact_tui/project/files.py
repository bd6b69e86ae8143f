"""The one reader of a project's files: regular files only, of a bounded size.

A folder is untrusted input: a FIFO, a socket, a device (``AGENTS.md -> /dev/zero``), a directory or a
2 GB sparse file may stand where a project file is expected. Every reader of project files (the trust
digest and listing, config sources, skills, ``AGENTS.md``, permissions, ``.env``, freeact's project
files, a project's session store and its index, checkpoint metadata and the app's own data files) goes
through ``read_bytes``/``read_text``: the file is opened without blocking (a FIFO with no
writer would hang a plain ``open``), checked to be a regular file on the open descriptor (no race with a
swap), and read no further than a bound. Anything else raises ``ProjectFileError`` with one line that
names the file and what it is; callers treat it as any unreadable file (``OSError``). An audit test
(``tests/fast/project/test_one_reader.py``) holds that no module of ``project/``, ``store/`` or
``checkpoints/`` reads a file any other way.

What is read to be *used* (not only shown or digested) goes through ``project.trusted``, which reads
here and checks the bytes against what the trust check read.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

MAX_PROJECT_FILE = 4 * 1024 * 1024
"""Bytes a project file (config, rules, instructions, skill, .env) may hold; more is refused, never read."""

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class ProjectFileError(OSError):
    """A project file that is not read: not a regular file, or too big. ``str(error)`` is one line."""

    def __init__(self, path: Path, reason: str, kind: str = "not-regular") -> None:
        super().__init__(errno.EINVAL, reason, str(path))
        self.path = path
        self.reason = reason
        self.kind = kind
        """Why, as a ``refusals.Reason`` value (the front ends' one table)."""

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}; not read"


def kind(mode: int) -> str | None:
    """What a file of this mode is, when it is not a regular file (``None`` for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


@dataclass(frozen=True)
class Opened:
    """What one read of a project file found: its bytes, the stat of the file they came from and the
    real path of that file (both taken on the open descriptor: no swap between them and the bytes)."""

    data: bytes
    info: os.stat_result
    real: str


def _real_path(fd: int, path: Path) -> str:
    """The real path of the file open at ``fd`` (``/proc`` names it; elsewhere the path's realpath)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(path)


def read_opened(
    path: Path, *, limit: int = MAX_PROJECT_FILE, follow: bool = True, head: bool = False, start: int = 0
) -> Opened:
    """The content of the regular file at ``path`` (a symlink followed unless ``follow`` is false), at most
    ``limit`` bytes, with the stat and real path of the very file read. ``head``: its first ``limit``
    bytes, whatever its size. ``start``: from that byte on (the size bound counts only what follows it).

    Raises:
        ProjectFileError: it is not a regular file (or, not ``follow``: a symlink), or holds more than
            ``limit`` bytes.
        OSError: it cannot be opened or read (missing, no permission, a socket).
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags if follow else flags | os.O_NOFOLLOW)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket, or a FIFO's other end: never a regular file
            raise ProjectFileError(path, "a socket or FIFO, not a regular file") from None
        if exc.errno == errno.ELOOP and not follow:
            raise ProjectFileError(path, "a symlink, not followed", "symlink") from None
        raise
    try:
        info = os.fstat(fd)
        what = kind(info.st_mode)
        if what is not None:
            raise ProjectFileError(path, f"{what}, not a regular file")
        if start:
            os.lseek(fd, start, os.SEEK_SET)
        if info.st_size - start > limit and not head:
            raise ProjectFileError(
                path, f"{info.st_size:,} bytes, more than the {limit:,} a project file may hold", "too-big"
            )
        want = limit if head else limit + 1
        chunks: list[bytes] = []
        total = 0
        while total < want:
            chunk = os.read(fd, min(1 << 20, want - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:  # it grew as it was read
            raise ProjectFileError(path, f"more than the {limit:,} bytes a project file may hold", "too-big")
        return Opened(b"".join(chunks), os.fstat(fd), _real_path(fd, path))
    finally:
        os.close(fd)


def read_bytes(path: Path, *, limit: int = MAX_PROJECT_FILE, follow: bool = True) -> bytes:
    """The content of the regular file at ``path`` (symlinks followed unless ``follow`` is false), at most
    ``limit`` bytes.

    Raises:
        ProjectFileError: it is not a regular file, or holds more than ``limit`` bytes.
        OSError: it cannot be opened or read (missing, no permission, a socket).
    """
    return read_opened(path, limit=limit, follow=follow).data


def write_new(directory: Path, real: str, name: str, data: bytes) -> Path:
    """Write ``data`` as the new file ``name`` in ``directory``, a folder code may write too (the images of
    a project that keeps them inside it): only when ``directory`` still is the folder ``real`` (its real
    path when the app chose it; a component swapped for a symlink since leads nowhere), and never through
    a symlink or over a file planted under that name.

    Raises:
        ProjectFileError: ``directory`` leads elsewhere now.
        OSError: it cannot be written (a file of that name exists, no permission, a full disk).
    """
    Path(real).mkdir(parents=True, exist_ok=True)
    try:
        dfd = os.open(real, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise ProjectFileError(directory, f"{real} is a symlink now, not the folder it was") from None
        raise
    try:
        now = _real_path(dfd, directory)
        if now != real:
            raise ProjectFileError(directory, f"now leads to {now}, not {real}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(name, flags, 0o644, dir_fd=dfd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
    finally:
        os.close(dfd)
    return directory / name


def read_text(
    path: Path, *, limit: int = MAX_PROJECT_FILE, errors: str = "strict", follow: bool = True
) -> str:
    """``read_bytes`` decoded as UTF-8 (``errors`` as for ``bytes.decode``).

    Raises:
        ProjectFileError, OSError: as ``read_bytes``.
        UnicodeDecodeError: the bytes are not UTF-8 (``errors="strict"``).
    """
    return read_bytes(path, limit=limit, follow=follow).decode("utf-8", errors=errors)


def read_env(path: Path) -> dict[str, str | None]:
    """The variables a ``.env`` file sets (python-dotenv's reading of it, ``${…}`` left as written), read as
    ``read_text`` reads.

    Raises:
        ProjectFileError, OSError, UnicodeDecodeError: as ``read_text``.
    """
    import io

    from dotenv import dotenv_values

    # never interpolated from the app's environment: project data reads none of it (``env_refs``)
    return dict(dotenv_values(stream=io.StringIO(read_text(path)), interpolate=False))


def is_regular(path: Path) -> bool:
    """Whether ``path`` (symlinks followed) is a regular file, found without opening it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


__all__ = [
    "MAX_PROJECT_FILE",
    "Opened",
    "ProjectFileError",
    "is_regular",
    "kind",
    "read_bytes",
    "read_env",
    "read_opened",
    "read_text",
    "write_new",
]
