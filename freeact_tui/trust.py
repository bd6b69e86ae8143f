"""Project trust: which folders the user has trusted, and whether their project files changed since.

A folder's *project files* are what a cloned repository could use to change how the app behaves:
``.freeact-tui.toml``, a freeact project's ``.freeact/config.toml`` and ``.freeact/permissions.toml``,
skills (``.freeact/skills``, ``.agents/skills``), ``AGENTS.md`` and a project ``.env``. None of them
applies until the user trusts the folder. The decision is kept in ``trusted-folders.json`` in the
user config dir (private, written atomically) with a digest of each file, so that a changed file is
shown and asked about again before it applies.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from freeact_tui import paths

TRUST_FILE_NAME = "trusted-folders.json"
AGENTS_FILE = "AGENTS.md"
ENV_FILE = ".env"
SKILL_DIRS = (Path(paths.FREEACT_DIR_NAME) / "skills", Path(".agents") / "skills")
# Text kept in the trust record to show a diff when a file changes (never a .env: it holds secrets).
_MAX_KEPT_TEXT = 64 * 1024
# A skills directory is digested file by file up to these bounds, then by names and sizes only.
_MAX_DIGEST_FILES = 2000
_MAX_DIGEST_BYTES = 32 * 1024 * 1024

TrustStatus = Literal["none", "trusted", "untrusted", "changed"]


@dataclass(frozen=True)
class ProjectFile:
    """One project file (or skills directory) found for a folder."""

    path: Path
    label: str
    """How the file is named to the user: relative to the folder when inside it."""
    digest: str
    text: str | None = None
    """The content, kept for a diff when it changes (``None`` for .env, directories and big files)."""


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
    try:
        data = path.read_bytes()
    except OSError:
        return None
    text: str | None = None
    if keep_text and len(data) <= _MAX_KEPT_TEXT:
        text = data.decode("utf-8", errors="replace")
    return ProjectFile(path, _label(path, folder), hashlib.sha256(data).hexdigest(), text)


def _dir_entry(directory: Path, folder: Path) -> ProjectFile | None:
    """A skills directory: one digest over its files' names and contents (names and sizes past the bounds)."""
    digest = hashlib.sha256()
    count = 0
    total = 0
    listing: list[str] = []
    try:
        files = sorted(p for p in directory.rglob("*") if p.is_file())
    except OSError:
        return None
    for file in files:
        rel = file.relative_to(directory).as_posix()
        listing.append(rel)
        digest.update(rel.encode("utf-8", errors="replace") + b"\0")
        try:
            size = file.stat().st_size
            count += 1
            total += size
            if count <= _MAX_DIGEST_FILES and total <= _MAX_DIGEST_BYTES:
                digest.update(hashlib.sha256(file.read_bytes()).digest())
            else:
                digest.update(str(size).encode())
        except OSError:
            digest.update(b"?")
    if not listing:
        return None
    # The file list is what a diff of a skills directory shows.
    return ProjectFile(
        directory, _label(directory, folder) + "/", digest.hexdigest(), "\n".join(listing) + "\n"
    )


def project_env_file(folder: Path) -> Path | None:
    """The ``.env`` the app would load for ``folder`` when it is a project's: the nearest at or above it,
    stopping below the home directory (a ``~/.env`` is the user's own, not a project's)."""
    home = Path.home().absolute()
    for directory in (folder, *folder.parents):
        if directory == home and directory != folder:
            return None
        candidate = directory / ENV_FILE
        if candidate.is_file():
            return candidate
    return None


def project_files(folder: Path) -> list[ProjectFile]:
    """The project files found for ``folder`` (see the module docstring), in a fixed order."""
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
    for candidate in candidates:
        if candidate.is_file() and (entry := _file_entry(candidate, folder)) is not None:
            found.append(entry)
    for root in roots:
        for skills in SKILL_DIRS:
            if (root / skills).is_dir() and (entry := _dir_entry(root / skills, folder)) is not None:
                found.append(entry)
    env = project_env_file(folder)
    if env is not None and (entry := _file_entry(env, folder, keep_text=False)) is not None:
        found.append(entry)
    return found


def _read_store() -> dict[str, Any]:
    try:
        data = json.loads(trust_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    folders = data.get("folders") if isinstance(data, dict) else None
    return folders if isinstance(folders, dict) else {}


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
    files = project_files(folder)
    if not files:
        return TrustState(folder, files, "none")
    record = _read_store().get(str(folder))
    if not isinstance(record, dict):
        return TrustState(folder, files, "untrusted")
    changes = _changes(record, files)
    return TrustState(folder, files, "changed" if changes else "trusted", changes)


def trust(state: TrustState) -> TrustState:
    """Record that the user trusts ``state.folder`` with its project files as they are now.

    Raises:
        TrustStoreError: the trusted-folders file cannot be written.
    """
    path = trust_file()
    try:
        raw = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        raw = {}  # a damaged list is replaced: it only ever grants, so losing it asks again
    if not isinstance(raw, dict) or not isinstance(raw.get("folders"), dict):
        raw = {"version": 1, "folders": {}}
    raw["folders"][str(state.folder)] = {
        "trusted_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        "files": {
            f.label: {"digest": f.digest, **({"text": f.text} if f.text is not None else {})}
            for f in state.files
        },
    }
    try:
        paths.atomic_write_text(path, json.dumps(raw, indent=1, sort_keys=True), mode=0o600)
    except OSError as exc:
        raise TrustStoreError(f"Cannot record the trusted folder in {path}: {exc.strerror or exc}") from exc
    return TrustState(state.folder, state.files, "trusted")


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
    "project_env_file",
    "project_files",
    "trust",
    "trust_file",
    "untrusted_notice",
]
