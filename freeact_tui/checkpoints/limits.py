"""What a checkpoint leaves out: files over a size, binary files over a smaller size, nested repos."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from freeact_tui.project import files as projectfiles

# git's own heuristic: a NUL byte in the first 8000 bytes makes a file binary.
_BINARY_SNIFF_BYTES = 8000


@dataclass(frozen=True)
class CheckpointLimits:
    """Size limits of checkpoints (files beyond them are skipped and reported, never stored).

    Args:
        max_file_bytes: Any file larger than this is skipped.
        max_binary_bytes: A binary file larger than this is skipped.
        max_files: A checkpoint that would add more new files than this fails with a clear
            message instead (a working directory such as ``$HOME`` without a ``.gitignore``).
    """

    max_file_bytes: int = 5 * 1024 * 1024
    max_binary_bytes: int = 1024 * 1024
    max_files: int = 50_000


@dataclass(frozen=True)
class SkippedFile:
    """A file a checkpoint did not store (or a restore could not bring back), and why."""

    path: str
    reason: str


def human_size(size: int) -> str:
    """``1536`` -> ``"1.5 KiB"``."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"  # pragma: no cover - the loop always returns


def is_binary(path: Path) -> bool:
    """True when the file's first 8000 bytes hold a NUL byte (git's test)."""
    try:
        return b"\0" in projectfiles.read_opened(path, limit=_BINARY_SNIFF_BYTES, head=True).data
    except OSError:
        return False


def limit_reason(path: Path, limits: CheckpointLimits) -> str | None:
    """Why ``path`` must be skipped, or None when a checkpoint may store it."""
    try:
        info = os.lstat(path)
    except OSError:
        return None  # vanished: git records whatever it finds
    if not stat.S_ISREG(info.st_mode):
        return None
    size = info.st_size
    if size > limits.max_file_bytes:
        return f"larger than the limit of {human_size(limits.max_file_bytes)} ({human_size(size)})"
    if size > limits.max_binary_bytes and is_binary(path):
        return f"a binary file larger than the limit of {human_size(limits.max_binary_bytes)} ({human_size(size)})"
    return None


NESTED_REPO_REASON = "a nested git repository (its files are not covered)"
