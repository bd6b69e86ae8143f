"""Project trust: which folders the user has trusted, and whether their project files changed since.

A folder's *project files* are what a cloned repository could use to change how the app behaves:
``.freeact-tui.toml``, a freeact project's ``.freeact/config.toml`` and ``.freeact/permissions.toml``,
skills (``.freeact/skills``, ``.agents/skills``), ``AGENTS.md`` and a project ``.env``. None of them
applies until the user trusts the folder. The decision is kept in ``trusted-folders.json`` in the
user config dir (private, written atomically) with a digest of each file, so that a changed file is
shown and asked about again before it applies.

Each check also registers what it read (``trusted.register``: the mark of every file, by real path), and
every use of a project file reads through ``trusted``, which refuses bytes that are not the ones the
check read: what was trusted is what is used, whatever changes the folder in between.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import os
import secrets
import stat
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from freeact_tui.project import files as projectfiles
from freeact_tui.project import paths, trusted
from freeact_tui.project.own_writes import OwnLedger, OwnMark, file_mark

TRUST_FILE_NAME = "trusted-folders.json"
AGENTS_FILE = "AGENTS.md"
ENV_FILE = ".env"
AGENTS_DIR = ".agents"
GENERATED_DIR = "generated"
SESSIONS_DIR = "sessions"
# Text kept in the trust record to show a diff when a file changes (never a .env: it holds secrets).
_MAX_KEPT_TEXT = 64 * 1024
# A directory's files are hashed up to this many bytes in all, then counted by name, size and mtime.
_MAX_DIGEST_BYTES = 32 * 1024 * 1024
# Symlinks followed in a row before a path counts as a name only.
_MAX_LINK_DEPTH = 8
# Names a directory's walk visits at most (a link to / or /proc must not walk the machine).
_MAX_WALK = 100_000
TOO_MANY = f"… more than {_MAX_WALK} files: not all could be checked, so this is asked at every start"

TrustStatus = Literal["none", "trusted", "untrusted", "changed"]


@dataclass(frozen=True)
class ProjectFile:
    """One project file (or skills directory) found for a folder."""

    path: Path
    label: str
    """How the file is named to the user: relative to the folder when inside it."""
    digest: str
    text: str | None = None
    """The content, kept for a diff when it changes (``None`` for .env and big files; a directory's
    file list)."""
    outside: tuple[str, ...] = ()
    """Symlinks in it that lead out of the folder (``link -> target``): the dialog names them."""
    marks: tuple[tuple[str, str], ...] = ()
    """Each file the check read, by real path, with the mark of what it read (``trusted``): what a use of
    it must find there."""


@dataclass(frozen=True)
class FileChange:
    label: str
    kind: Literal["added", "removed", "changed"]
    diff: str = ""
    """A unified diff of the old and new text, when both are known."""


@dataclass(frozen=True)
class TrustState:
    """What is known about a folder: its project files and whether the user trusts them as they are."""

    folder: Path
    files: list[ProjectFile] = field(default_factory=list)
    status: TrustStatus = "none"
    changes: list[FileChange] = field(default_factory=list)
    granted: bool = False
    """Trusted just now (``trust``), with these files and changes: a caller without a dialog says what."""
    own_marks: tuple[tuple[str, str], ...] = ()
    """The marks of the app's own files the check found (in no entry: they are no change): a use finds
    them as the app left them."""

    @property
    def trusted(self) -> bool:
        """Whether the project files may apply (``none``: there are none to apply)."""
        return self.status in ("none", "trusted")

    @property
    def labels(self) -> list[str]:
        return [f.label for f in self.files]


class TrustStoreError(Exception):
    """The trusted-folders file cannot be written; ``str(error)`` says why."""


def trust_file() -> Path:
    return paths.config_dir() / TRUST_FILE_NAME


def _label(path: Path, folder: Path) -> str:
    try:
        return str(path.relative_to(folder))
    except ValueError:
        return str(path)


def _file_entry(path: Path, folder: Path, keep_text: bool = True) -> ProjectFile | None:
    """One file: its content's digest (past ``_MAX_DIGEST_BYTES``: its size and time), its text for a diff,
    and, when it is a link out of the folder, where it leads (the dialog names it)."""
    try:
        info = path.stat()
        opened = (
            projectfiles.read_opened(path, limit=_MAX_DIGEST_BYTES)
            if stat.S_ISREG(info.st_mode) and info.st_size <= _MAX_DIGEST_BYTES
            else None
        )
    except OSError:
        return None
    data = opened.data if opened is not None else None
    outside: tuple[str, ...] = ()
    if path.is_symlink() and not (target := Path(os.path.realpath(path))).is_relative_to(folder):
        outside = (f"{_label(path, folder)} -> {target}",)
    if data is None:
        digest = hashlib.sha256(f"{info.st_mode}:{info.st_size}:{info.st_mtime_ns}".encode()).hexdigest()
        marks = ((os.path.realpath(path), trusted.stat_mark(info)),) if stat.S_ISREG(info.st_mode) else ()
        return ProjectFile(path, _label(path, folder), digest, None, outside, marks)
    assert opened is not None
    text: str | None = None
    if keep_text and len(data) <= _MAX_KEPT_TEXT:
        text = data.decode("utf-8", errors="replace")
    marks = ((opened.real, trusted.content_mark(data)),)
    return ProjectFile(path, _label(path, folder), hashlib.sha256(data).hexdigest(), text, outside, marks)


def _walk(directory: Path, folder: Path, skip: Collection[Path]) -> tuple[list[tuple[str, Path]], list[str]]:
    """Every file under ``directory`` as ``(name relative to it, path)``, sorted, and the symlinks that
    lead out of ``folder`` (as ``link -> target``).

    Symlinks are followed (a link to a directory is entered: the skill loader and the importer enter it
    too), each real directory once (no cycle is walked twice), at most ``_MAX_LINK_DEPTH`` links deep.
    Directories in ``skip`` are left out (another entry covers them). Past ``_MAX_WALK`` names the walk
    stops and says so with a name of its own (``TOO_MANY``), which the caller never lets trust stick to.
    The walk keeps its own stack: no depth of nesting can break it.
    """
    files: list[tuple[str, Path]] = []
    outside: list[str] = []
    seen: set[tuple[int, int]] = set()
    stack: list[tuple[Path, str, int]] = [(directory, "", 0)]
    while stack:
        path, rel, links = stack.pop()
        if len(files) + len(stack) > _MAX_WALK:
            files.append((TOO_MANY, directory))
            break
        if path in skip:
            continue
        if path.is_symlink():
            if links >= _MAX_LINK_DEPTH:
                files.append((rel + " (link chain too long)", path))
                continue
            try:
                target = Path(os.path.realpath(path))
            except (OSError, ValueError):
                files.append((rel + " (unreadable link)", path))
                continue
            if not target.is_relative_to(folder):
                outside.append(f"{_label(path, folder)} -> {target}")
            links += 1
        try:
            status = path.stat()
        except OSError:
            files.append((rel, path))
            continue
        if not stat.S_ISDIR(status.st_mode):
            files.append((rel, path))
            continue
        if (status.st_dev, status.st_ino) in seen:  # a directory is walked once, however it is reached
            files.append((rel + "/ (seen)", path))
            continue
        seen.add((status.st_dev, status.st_ino))
        try:
            children = sorted(path.iterdir(), reverse=True)
        except OSError:
            files.append((rel + "/ (unreadable)", path))
            continue
        stack += [(child, f"{rel}/{child.name}" if rel else child.name, links) for child in children]
    return sorted(files), sorted(outside)


def _dir_entry(
    directory: Path,
    folder: Path,
    skip: Collection[Path] = (),
    *,
    empty: bool = False,
    own: OwnLedger | None = None,
    contents: Callable[[Path, int], int] | None = None,
) -> ProjectFile | None:
    """A directory as one entry: a digest over every file's name and content, and its listing.

    Contents are hashed up to ``_MAX_DIGEST_BYTES`` in all; past it a file counts by its name, size and
    modification time, so there is no file an edit could hide in (a huge tree costs time, never a blind
    spot). ``empty``: the entry exists even without files (a bare ``.freeact/`` is a project's).
    ``own``: files the app wrote itself (``note_own_writes``), left out while they hold only its bytes.
    ``contents``: how many bytes of a file (given its size) are digested by content, the rest by its size,
    modification and change times (a store of data that may be large, read at every start); ``None``: all.
    """
    digest = hashlib.sha256()
    total = 0
    listing: list[str] = []
    marks: list[tuple[str, str]] = []
    files, outside = _walk(directory, folder, skip)
    for rel, file in files:
        if own is not None and own.is_own(file):
            # The app's own bytes, as they are now: a use finds them so (with no entry to carry them when
            # every file is the app's: ``own.seen``).
            _mark_by_stat(file, own.seen)
            continue
        listing.append(rel)
        digest.update(rel.encode("utf-8", errors="replace") + b"\0")
        try:
            info = file.stat()
            want = info.st_size if contents is None else min(info.st_size, contents(file, info.st_size))
            if want and file.is_file() and total + want <= _MAX_DIGEST_BYTES:
                total += want
                if want < info.st_size:  # its head by content, all of it by its stat
                    opened = projectfiles.read_opened(file, limit=want, head=True)
                    stamp = f"{opened.info.st_size}:{opened.info.st_mtime_ns}:{opened.info.st_ctime_ns}"
                    digest.update(hashlib.sha256(opened.data).digest() + stamp.encode())
                    marks.append((opened.real, trusted.stat_mark(opened.info)))
                    continue
                opened = projectfiles.read_opened(file, limit=info.st_size)
                digest.update(hashlib.sha256(opened.data).digest())
                marks.append((opened.real, trusted.content_mark(opened.data)))
            else:
                # The change time too: no user can set it back (a modification time can be).
                digest.update(f"{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}".encode())
                _mark_by_stat(file, marks, info)
        except OSError:
            digest.update(b"?")
    for link in outside:
        digest.update(link.encode("utf-8", errors="replace") + b"\0")
    if TOO_MANY in listing:
        digest.update(secrets.token_bytes(16))  # never the same: a walk cut short is never trusted as is
    if not listing and not empty:
        return None
    # The file list is what a diff of a directory shows.
    text = "".join(f"{rel}\n" for rel in listing)
    label = _label(directory, folder) + "/"
    return ProjectFile(directory, label, digest.hexdigest(), text, tuple(outside), tuple(marks))


def _mark_by_stat(file: Path, marks: list[tuple[str, str]], info: os.stat_result | None = None) -> None:
    """Add ``file``'s stat mark to ``marks`` (a regular file only; one that cannot be read is left out)."""
    try:
        info = info or file.stat()
        if stat.S_ISREG(info.st_mode):
            marks.append((os.path.realpath(file), trusted.stat_mark(info)))
    except OSError:
        pass


def _stands(path: Path) -> bool:
    """Anything but an empty directory stands at ``path`` (the sandbox's placeholder is one: it holds nothing)."""
    if not os.path.lexists(path):
        return False
    try:
        return path.is_symlink() or not path.is_dir() or any(path.iterdir())
    except OSError:
        return True


def project_env_file(folder: Path) -> Path | None:
    """The ``.env`` the app would load for ``folder`` when it is a project's: the nearest at or above it
    (of any kind: ``projectfiles`` reads only a regular file),
    stopping below the home directory (a ``~/.env`` is the user's own, not a project's)."""
    home = Path.home().absolute()
    for directory in (folder, *folder.parents):
        if directory == home and directory != folder:
            return None
        candidate = directory / ENV_FILE
        if _stands(candidate):  # whatever stands there: a FIFO or a device is named, never read
            return candidate
    return None


# the store's cache of what its sessions hold (store.index): left out of the digest because it is never read
# in a project's store (a listing reads each session's meta.json as this check read it)
_SESSIONS_INDEX = ".index.json"
_SESSION_META = "meta.json"
# A session's meta is digested whole up to this size; of a history, the head (what a listing shows).
_SESSION_META_MAX = 1024 * 1024
_SESSION_HEAD = 64 * 1024


def _session_content(file: Path, size: int) -> int:
    """Bytes of a session store's file the digest reads by content: a ``meta.json`` whole (a resumed
    session takes settings from it), the head of a history (its first prompt is a listing's title); the
    rest counts by its stat (``_dir_entry``)."""
    if file.name == _SESSION_META and size <= _SESSION_META_MAX:
        return size
    return _SESSION_HEAD if file.suffix == ".jsonl" else 0


def _sessions_entry(sessions: Path, folder: Path, own: OwnLedger) -> ProjectFile | None:
    """A project's session store: every file in it but those holding only the app's own bytes (``own``:
    the app marks each file it writes or appends to); a session planted by a clone or a pull, a line
    added to one the app wrote, or an edit of its earlier lines is asked about. A session's
    ``meta.json`` counts too, by content: a resumed session takes settings from it (``store.restored``),
    and the app marks each one it writes; of a history, its head by content and the rest by its stat."""
    if not (sessions.is_dir() or sessions.is_symlink()):
        return None
    try:
        children = list(sessions.iterdir())
    except OSError:
        children = []
    skip = {c for c in children if c.name == _SESSIONS_INDEX and not c.is_symlink()}
    return _dir_entry(sessions, folder, skip, own=own, contents=_session_content)


def _tree_entries(root: Path, folder: Path, own: OwnLedger) -> list[ProjectFile]:
    """``root``'s ``.freeact/`` and ``.agents/``, whole: skills and generated code each as an entry of
    their own (the dialog describes them), then everything else in them, so that nothing in either is
    outside the digest (a bare ``.freeact/`` counts too); sessions as ``_sessions_entry`` says. What the
    app wrote itself and is unchanged (``own``) is left out."""
    entries: list[ProjectFile] = []
    for top in (paths.FREEACT_DIR_NAME, AGENTS_DIR):
        base = root / top
        if not (base.exists() or base.is_symlink()):
            continue
        if not base.is_dir():
            # Nothing reads a plain file of that name (the sandbox's placeholder for a missing .freeact/
            # is one); a link may point at a directory later, so it is named.
            if base.is_symlink() and (entry := _file_entry(base, folder)) is not None:
                entries.append(entry)
            continue
        parts = [base / "skills"] + ([base / GENERATED_DIR] if top == paths.FREEACT_DIR_NAME else [])
        for part in parts:
            if (part.is_dir() or part.is_symlink()) and (
                entry := _dir_entry(part, folder, own=own)
            ) is not None:
                entries.append(entry)
        if top == paths.FREEACT_DIR_NAME and (entry := _sessions_entry(base / SESSIONS_DIR, folder, own)):
            entries.append(entry)
        skip = {*parts, base / SESSIONS_DIR}
        if top == paths.FREEACT_DIR_NAME:
            skip |= {base / "config.toml", base / "permissions.toml"}
        # A bare .freeact/ makes a freeact project (its sessions and rules would go there); an empty
        # .agents/ is read for nothing (the sandbox's placeholder for a missing one is one).
        empty = top == paths.FREEACT_DIR_NAME
        if (entry := _dir_entry(base, folder, skip, empty=empty, own=own)) is not None:
            entries.append(entry)
    return entries


def project_files(folder: Path) -> list[ProjectFile]:
    """The project files found for ``folder`` (see the module docstring), in a fixed order."""
    return _scan(folder)[0]


def _scan(folder: Path) -> tuple[list[ProjectFile], tuple[tuple[str, str], ...]]:
    """``project_files`` and the marks of the app's own files among them (left out of every entry)."""
    folder = folder.expanduser().resolve()
    found: list[ProjectFile] = []
    candidates: list[Path] = [folder / paths.PROJECT_CONFIG_NAME]
    roots = [folder]
    project = paths.find_freeact_project(folder)
    if project is not None:
        project = project.resolve()
        freeact_dir = project / paths.FREEACT_DIR_NAME
        candidates += [freeact_dir / "config.toml", freeact_dir / "permissions.toml"]
        if project != folder:
            roots.append(project)
    candidates.append(folder / AGENTS_FILE)
    for candidate in candidates:  # whatever stands there is named (a FIFO or a device too: never read)
        if _stands(candidate) and (entry := _file_entry(candidate, folder)) is not None:
            found.append(entry)
    own = OwnLedger(_read_own(), time.time_ns())
    for root in roots:
        found += _tree_entries(root, folder, own)
    if own.settles:
        _store_marks(own.settles)
    env = project_env_file(folder)
    if env is not None and (entry := _file_entry(env, folder, keep_text=False)) is not None:
        found.append(entry)
    return found, tuple(own.seen)


_MAX_TRUST_FILE = 64 * 1024 * 1024  # the trusted-folders file (the app's own, in its data dir)


def _read_raw() -> dict[str, Any]:
    try:
        data = json.loads(projectfiles.read_bytes(trust_file(), limit=_MAX_TRUST_FILE))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _read_store() -> dict[str, Any]:
    folders = _read_raw().get("folders")
    return folders if isinstance(folders, dict) else {}


def _read_own() -> dict[str, OwnMark]:
    own = _read_raw().get("own")
    return {k: m for k, v in own.items() if (m := OwnMark.from_json(v))} if isinstance(own, dict) else {}


def _write_raw(update: Callable[[dict[str, Any]], None]) -> None:
    """Read the trusted-folders file, change it with ``update`` and write it back (atomically, private).

    Raises:
        TrustStoreError: the file cannot be written.
    """
    path = trust_file()
    raw = _read_raw()  # a damaged list is replaced: it only ever grants, so losing it asks again
    if not isinstance(raw.get("folders"), dict):
        raw = {
            "version": 1,
            "folders": {},
            **({"own": raw["own"]} if isinstance(raw.get("own"), dict) else {}),
        }
    update(raw)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        paths.atomic_write_text(path, json.dumps(raw, indent=1, sort_keys=True), mode=0o600)
    except OSError as exc:
        raise TrustStoreError(f"Cannot record the trusted folder in {path}: {exc.strerror or exc}") from exc


def note_own_writes(written: Iterable[Path]) -> None:
    """Remember files the app itself has just written whole into a project (generated APIs) by their
    content, so that they never count as a change of the project while they hold only those bytes."""
    store_own_marks({path: mark for path in written if (mark := file_mark(path)) is not None})


def note_project_write(path: Path, data: bytes) -> None:
    """The app has just written ``data`` whole to the project file ``path`` (a rule the user added to
    ``permissions.toml``, ``freeact init``'s config): what it wrote is what the user trusts of it, in
    this process (``trusted.note_written``) and in the record of every trusted folder that lists it, so
    the next start does not ask about the app's own write. (The app read the file through
    ``trusted`` first: it never writes over bytes the user did not trust.) A record that cannot be
    written only means the next start asks again."""
    trusted.note_written(path, data)
    names = {Path(os.path.abspath(path)), Path(os.path.realpath(path))}
    entry = {
        "digest": hashlib.sha256(data).hexdigest(),
        **({"text": data.decode("utf-8", errors="replace")} if len(data) <= _MAX_KEPT_TEXT else {}),
    }

    def update(raw: dict[str, Any]) -> None:
        for folder, record in raw["folders"].items():
            files = record.get("files") if isinstance(record, dict) else None
            if isinstance(files, dict):
                for label in {_label(name, Path(folder)) for name in names} & files.keys():
                    files[label] = dict(entry)

    with contextlib.suppress(TrustStoreError):
        _write_raw(update)


def own_mark(path: Path) -> OwnMark | None:
    """The mark recorded for a file the app wrote (``None``: none, or not readable)."""
    return _read_own().get(os.path.abspath(path))


def store_own_marks(marks: Mapping[Path, OwnMark]) -> None:
    """Record ``marks`` of files the app wrote (see ``ownwrites``); files gone since are forgotten.

    A failure to write the record only means the next start asks again. The marked bytes are also
    what a use of the file in this process expects (``trusted.note_own``).
    """
    for path, mark in marks.items():
        trusted.note_own(path, mark.sha256)
    _store_marks({os.path.abspath(path): mark for path, mark in marks.items()})


def _store_marks(marks: Mapping[str, OwnMark]) -> None:
    if not marks:
        return

    def update(raw: dict[str, Any]) -> None:
        kept = raw.get("own")
        own: dict[str, Any] = kept if isinstance(kept, dict) else {}
        new = {k: v.to_json() for k, v in marks.items()}
        raw["own"] = {k: v for k, v in {**own, **new}.items() if os.path.lexists(k)}

    try:
        _write_raw(update)
    except TrustStoreError:
        pass


def _diff(label: str, old: str | None, new: str | None) -> str:
    if old is None or new is None:
        return ""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"{label} (trusted)", f"{label} (now)"
    )
    return "".join(lines)


def _changes(record: dict[str, Any], files: Iterable[ProjectFile]) -> list[FileChange]:
    kept = record.get("files")
    kept = kept if isinstance(kept, dict) else {}
    changes: list[FileChange] = []
    now = {f.label: f for f in files}
    for label, file in now.items():
        old = kept.get(label)
        if not isinstance(old, dict):
            changes.append(FileChange(label, "added", _diff(label, "", file.text)))
        elif old.get("digest") != file.digest:
            old_text = old.get("text") if isinstance(old.get("text"), str) else None
            changes.append(FileChange(label, "changed", _diff(label, old_text, file.text)))
    for label in kept:
        if label not in now:
            changes.append(FileChange(label, "removed"))
    return changes


def check(folder: Path) -> TrustState:
    """The trust state of ``folder``: its project files, and whether they are trusted as they are now."""
    folder = folder.expanduser().resolve()
    files, own = _scan(folder)
    if not files:
        return _registered(TrustState(folder, files, "none", own_marks=own))
    record = _read_store().get(str(folder))
    if not isinstance(record, dict):
        return _registered(TrustState(folder, files, "untrusted", own_marks=own))
    changes = _changes(record, files)
    return _registered(TrustState(folder, files, "changed" if changes else "trusted", changes, own_marks=own))


def _registered(state: TrustState) -> TrustState:
    """``state``, registered as what this process may use of its folder (``trusted``: only the bytes read
    now, and only when the folder is trusted with them)."""
    marks = [*(mark for file in state.files for mark in file.marks), *state.own_marks]
    trusted.register(state.folder, trusted=state.trusted, marks=marks)
    return state


def trust(state: TrustState) -> TrustState:
    """Record that the user trusts ``state.folder`` with its project files as they are now.

    Raises:
        TrustStoreError: the trusted-folders file cannot be written.
    """

    def update(raw: dict[str, Any]) -> None:
        raw["folders"][str(state.folder)] = {
            "trusted_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            "files": {
                f.label: {"digest": f.digest, **({"text": f.text} if f.text is not None else {})}
                for f in state.files
            },
        }

    _write_raw(update)
    return _registered(
        TrustState(state.folder, state.files, "trusted", state.changes, granted=True, own_marks=state.own_marks)
    )


def untrusted_notice(state: TrustState) -> str:
    """The one line that says which project files are ignored and how to trust the folder."""
    what = "changed since it was trusted" if state.status == "changed" else "not trusted"
    names = ", ".join(f.label for f in state.files)
    return (
        f"this folder ({state.folder}) is {what}; its project files are ignored: {names}. "
        "To apply them, run with --trust, or start freeact-tui here and choose Trust."
    )


__all__ = [
    "FileChange",
    "ProjectFile",
    "TrustState",
    "TrustStoreError",
    "check",
    "note_own_writes",
    "note_project_write",
    "own_mark",
    "store_own_marks",
    "project_env_file",
    "project_files",
    "trust",
    "trust_file",
    "untrusted_notice",
]
