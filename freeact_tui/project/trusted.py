"""The trusted bytes: what the trust check read of a folder's project files, and the one reader for use.

The trust check (``trust.check``/``trust.trust``) digests every project file; whatever later *uses* one
(config, ``.env``, rules, skills, ``AGENTS.md``) must use those very bytes, never what a ``git pull``, a
background process or an earlier session put there since. So the check registers, per folder, the mark of
every file it read (``register``), and every use reads through ``read_bytes``/``read_text``/``read_env``
here: one read that returns the bytes *and* checks them, on the open descriptor, against the mark. A file
that changed, appeared or is not trusted raises ``ProjectFileChanged`` (one line; an ``OSError``, so every
caller already treats it as a file it cannot use) and nothing of it is used: the next start asks again.

A mark is the SHA-256 of the bytes the check read (``sha256:…``), or, for a file the check counted by
its stat (past its byte budget, or the app's own write), its inode, size and modification and change
times (``stat:…``; no user can set a change time back). Marks are keyed by the real path of the file
(taken on the descriptor), so a symlink leads to the file the check read or to nothing trusted.

A path is *covered* by a folder's registration when the trust check would have listed it: anything in a
``.freeact/`` or ``.agents/`` at or above the folder, a ``.env`` at or above it, its ``AGENTS.md`` and
``.freeact-tui.toml`` (``covers``), stopping below the home directory as the check does. A path no
registration covers is not a project file of any checked folder (the SDK used without a trust check): it
is read as ``files`` reads it.

The trust dialog reads an untrusted folder's files to describe them (``reviewing``): it gets the bytes
the check read (so what is shown is what trusting records) and nothing else, never a newer version.

The app's own writes into a project (a rule added to ``permissions.toml``, generated APIs) are noted
(``note_written``, ``note_own``): what it wrote is what a use expects. The session store reads here too
(``store.checked_read``). The generated code the kernel imports is checked in the kernel, against a copy of
these marks the app writes for it (``code_manifest``, kept current through ``watch``).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from freeact_tui.filenames import fold, folded
from freeact_tui.project import files as projectfiles
from freeact_tui.project import paths

# Compared as a file system may compare names (``filenames.fold``): ``.Freeact/`` is ``.freeact/`` on macOS.
_TREES = folded((paths.FREEACT_DIR_NAME, ".agents"))
_ABOVE = folded((".env",))
_HERE = folded((paths.PROJECT_CONFIG_NAME, "AGENTS.md"))


class ProjectFileChanged(projectfiles.ProjectFileError):  # noqa: N818 (an OSError, named as what happened)
    """A project file whose bytes are not the ones the trust check read (changed, new, or not trusted)."""

    def __str__(self) -> str:
        return f"{self.path} {self.reason}; not used: start again to be asked about it"


def content_mark(data: bytes) -> str:
    """The mark of a file the check read whole."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def stat_mark(info: os.stat_result) -> str:
    """The mark of a file the check counted by its stat."""
    return f"stat:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"


def _matches(mark: str, opened: projectfiles.Opened) -> bool:
    if mark.startswith("stat:"):
        return mark == stat_mark(opened.info)
    return mark == content_mark(opened.data)


@dataclass(frozen=True)
class Registration:
    """One folder's trust check: whether its project files may be used, and the mark of each it read."""

    folder: Path
    trusted: bool
    marks: Mapping[str, str] = field(default_factory=dict)

    def covers(self, path: str) -> bool:
        """Whether the check of ``folder`` would have listed ``path`` (see the module docstring)."""
        candidate = Path(path)
        home = Path.home().absolute()
        for directory in (self.folder, *self.folder.parents):
            if directory == home and directory != self.folder:
                break  # as the check looks: the user's own ~/.env and ~/.freeact are no project's
            if not candidate.is_relative_to(directory):
                continue
            parts = candidate.relative_to(directory).parts
            if parts and (fold(parts[0]) in _TREES or (len(parts) == 1 and fold(parts[0]) in _ABOVE)):
                return True
        return candidate.parent == self.folder and fold(candidate.name) in _HERE

    def refusal(self, opened: projectfiles.Opened) -> str | None:
        """Why the bytes just read may not be used (``None``: they are the ones the check read)."""
        refused = self.refused(opened)
        return refused[1] if refused is not None else None

    def refused(self, opened: projectfiles.Opened) -> tuple[str, str] | None:
        """As ``refusal``, with its kind first (a ``refusals.Reason`` value)."""
        if not self.trusted and not _reviewing.get():
            return "untrusted", f"is in {self.folder}, which is not trusted"
        mark = self.marks.get(opened.real)
        if mark is None:
            return "appeared", "appeared after the trust check"
        if not _matches(mark, opened):
            return "changed", "changed after the trust check read it"
        return None


_reviewing: ContextVar[bool] = ContextVar("reviewing", default=False)


@contextmanager
def reviewing() -> Iterator[None]:
    """Reads in this block describe a folder for the trust dialog: an untrusted folder's files are read
    too, but only as the check read them."""
    token = _reviewing.set(True)
    try:
        yield
    finally:
        _reviewing.reset(token)


_lock = threading.Lock()
_registered: dict[Path, Registration] = {}


_watchers: list[Callable[[Path | None], None]] = []


def watch(callback: Callable[[Path | None], None]) -> None:
    """Call ``callback(path)`` after every change of what is registered: the app's own write of ``path``,
    or ``None`` for a check (anything may have changed). A copy of the marks kept elsewhere
    (``code_manifest``, for the kernel) is written again."""
    with _lock:
        _watchers.append(callback)


def unwatch(callback: Callable[[Path | None], None]) -> None:
    with _lock:
        if callback in _watchers:
            _watchers.remove(callback)


def _changed(path: Path | None = None) -> None:
    with _lock:
        watchers = list(_watchers)
    for callback in watchers:
        callback(path)


def register(folder: Path, *, trusted: bool, marks: Iterable[tuple[str, str]]) -> None:
    """Record what the trust check of ``folder`` found (replacing an earlier check of it)."""
    registration = Registration(folder, trusted, MappingProxyType(dict(marks)))
    with _lock:
        _registered[folder] = registration
    _changed()


def trusted_marks(path: Path) -> Mapping[str, str] | None:
    """The marks a use of files under the directory ``path`` must find (by real path): those of the
    registration that decides about it (``{}`` when its folder is not trusted), or ``None`` when no check
    covers it (read as ``files`` reads it)."""
    lexical, real = os.path.abspath(path), os.path.realpath(path)
    registration = _deciding(os.path.join(lexical, "_"), os.path.join(real, "_"))
    if registration is None:
        return None
    return registration.marks if registration.trusted else {}


def forget(folder: Path) -> None:
    """Drop the registration of ``folder`` (its files are then read as no check had been made)."""
    with _lock:
        _registered.pop(folder, None)
    _changed()


def _deciding(lexical: str, real: str) -> Registration | None:
    """The registration that decides about a file: the deepest checked folder covering it (by the path
    as asked for or the file's real path), or ``None``."""
    with _lock:
        found = [r for r in _registered.values() if r.covers(lexical) or r.covers(real)]
    return max(found, key=lambda r: len(r.folder.parts), default=None)


def read_opened(path: Path, *, limit: int = projectfiles.MAX_PROJECT_FILE) -> projectfiles.Opened:
    """Read the project file at ``path`` for use: the bytes, checked against what the trust check read.

    Raises:
        ProjectFileChanged: they are not the bytes the check read (changed, new, not trusted).
        ProjectFileError, OSError: as ``files.read_bytes``.
    """
    opened = projectfiles.read_opened(path, limit=limit)
    registration = _deciding(os.path.abspath(path), opened.real)
    if registration is not None and (refused := registration.refused(opened)) is not None:
        raise ProjectFileChanged(path, refused[1], refused[0])
    return opened


def read_bytes(path: Path, *, limit: int = projectfiles.MAX_PROJECT_FILE) -> bytes:
    """``read_opened``'s bytes."""
    return read_opened(path, limit=limit).data


def read_text(path: Path, *, limit: int = projectfiles.MAX_PROJECT_FILE, errors: str = "strict") -> str:
    """``read_bytes`` decoded as UTF-8 (``errors`` as for ``bytes.decode``)."""
    return read_bytes(path, limit=limit).decode("utf-8", errors=errors)


def read_env(path: Path) -> dict[str, str | None]:
    """The variables a ``.env`` file sets (python-dotenv's reading of it, ``${…}`` left as written), read as
    ``read_text`` reads."""
    import io

    from dotenv import dotenv_values

    # never interpolated from the app's environment: project data reads none of it (``env_refs``)
    return dict(dotenv_values(stream=io.StringIO(read_text(path)), interpolate=False))


def note_written(path: Path, data: bytes) -> None:
    """The app has just written ``data`` to ``path`` itself (a rule added to ``permissions.toml``): those
    bytes are what a trusted registration covering it expects from now on (the app's own write is no
    change of the project; anything else there is)."""
    _note(path, content_mark(data))


def note_own(path: Path, sha256: str) -> None:
    """As ``note_written``, for a file the app wrote whose bytes' SHA-256 is ``sha256`` (``own_writes``)."""
    _note(path, "sha256:" + sha256)


def _note(path: Path, mark: str) -> None:
    lexical, real = os.path.abspath(path), os.path.realpath(path)
    with _lock:
        for folder, registration in list(_registered.items()):
            if registration.trusted and (registration.covers(lexical) or registration.covers(real)):
                marks = {**registration.marks, real: mark}
                _registered[folder] = Registration(folder, True, MappingProxyType(marks))
    _changed(path)


__all__ = [
    "ProjectFileChanged",
    "Registration",
    "content_mark",
    "forget",
    "note_own",
    "note_written",
    "read_bytes",
    "read_env",
    "read_opened",
    "read_text",
    "register",
    "reviewing",
    "stat_mark",
    "trusted_marks",
    "unwatch",
    "watch",
]
