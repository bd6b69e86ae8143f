"""The files of a working directory for the ``@`` picker: listed once, filtered fuzzily per keystroke.

Listing uses ``git ls-files --cached --others --exclude-standard`` in a git work tree of a trusted
folder (so .gitignore and friends apply; run by ``gitrun``, none of the repository's programs), else a walk that skips ``SKIP_DIRS`` and honours the simple patterns of a
top-level ``.gitignore``. Filtering is a subsequence match (``fbp`` finds ``foo/bar.py``) run as one
regular expression over all paths joined by newlines; a query that extends the previous one only
searches the previous matches.
"""

from __future__ import annotations

import fnmatch
import heapq
import os
import re
import threading
from collections.abc import Iterable
from pathlib import Path

from freeact_tui.gitrun import run_git
from freeact_tui.project import files as projectfiles

SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".ruff_cache"})
MAX_FILES = 200_000
"""The most paths listed (a picker over more is no use, and memory stays bounded)."""


def list_files(root: Path, *, limit: int = MAX_FILES, use_git: bool = True) -> list[str]:
    """Relative POSIX paths of the files under ``root`` (gitignore-aware), sorted.

    Args:
        use_git: Whether git may list them (``False`` for a folder not trusted: no git runs there).
    """
    files = _git_files(root) if use_git else None
    if files is None:
        files = _walk_files(root, limit)
    return sorted(files[:limit])


def _git_files(root: Path) -> list[str] | None:
    if not (root / ".git").exists():
        return None
    done = run_git(["ls-files", "-z", "--cached", "--others", "--exclude-standard"], root)
    if done is None or done.returncode != 0:
        return None
    return [p for p in done.stdout.decode("utf-8", "replace").split("\0") if p]


def _gitignore_patterns(root: Path) -> list[str]:
    try:
        # the folder's own file (a link to /dev/zero, a FIFO): regular and bounded only
        lines = projectfiles.read_text(root / ".gitignore", errors="replace").splitlines()
    except OSError:
        return []
    return [line.strip() for line in lines if line.strip() and not line.startswith(("#", "!"))]


def _ignored(rel: str, name: str, is_dir: bool, patterns: Iterable[str]) -> bool:
    for pattern in patterns:
        dir_only = pattern.endswith("/")
        pat = pattern.rstrip("/")
        if dir_only and not is_dir:
            continue
        if pat.startswith("/") or "/" in pat:
            if fnmatch.fnmatchcase(rel, pat.lstrip("/")):
                return True
        elif fnmatch.fnmatchcase(name, pat):
            return True
    return False


def _walk_files(root: Path, limit: int) -> list[str]:
    patterns = _gitignore_patterns(root)
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        prefix = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
        dirnames[:] = sorted(
            d for d in dirnames if d not in SKIP_DIRS and not _ignored(prefix + d, d, True, patterns)
        )
        for name in filenames:
            rel = prefix + name
            if not _ignored(rel, name, False, patterns):
                out.append(rel)
                if len(out) >= limit:
                    return out
    return out


class FileIndex:
    """Paths of one directory with an incremental fuzzy filter.

    Args:
        paths: Relative paths (``list_files``).
    """

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        self._last_query = ""
        self._last_matches: list[str] = paths
        self._lock = threading.Lock()  # the picker filters in a thread per keystroke

    def __len__(self) -> int:
        return len(self.paths)

    @property
    def matched(self) -> int:
        """How many paths the last query matched."""
        return len(self._last_matches)

    def filter(self, query: str, limit: int = 50) -> list[str]:
        """The best ``limit`` paths matching ``query`` fuzzily (all of its characters in order)."""
        with self._lock:
            return self._filter(query.strip(), limit)

    def _filter(self, query: str, limit: int) -> list[str]:
        if not query:
            self._last_query, self._last_matches = "", self.paths
            return self.paths[:limit]
        base = self._last_matches if self._last_query and query.startswith(self._last_query) else self.paths
        # One regex over all candidate paths joined by newlines ("." never crosses a newline).
        body = ".*?".join(re.escape(c) for c in query if c != "\n")
        line = re.compile(rf"^.*?{body}.*$", re.IGNORECASE | re.MULTILINE)
        blob = "\n".join(base)
        matches = [m.group(0) for m in line.finditer(blob)]
        self._last_query, self._last_matches = query, matches
        q = query.lower()
        # A cheap ranking over all matches picks candidates; the finer one orders those.
        candidates = heapq.nsmallest(max(limit * 10, 500), matches, key=lambda p: _quick_score(p, q))
        return sorted(candidates, key=lambda p: _score(p, q))[:limit]


def _quick_score(path: str, query: str) -> tuple[bool, bool, int]:
    """Lower is better: the query inside the file name, then anywhere as is, then the shorter path."""
    lower = path.lower()
    return (query not in lower[lower.rfind("/") + 1 :], query not in lower, len(path))


def _score(path: str, query: str) -> tuple[bool, bool, int, int]:
    """As ``_quick_score``, then the tightest match nearest the end (the file name) before the length."""
    lower = path.lower()
    return (query not in lower[lower.rfind("/") + 1 :], query not in lower, _span(lower, query), len(path))


def _span(text: str, query: str) -> int:
    """The width of the match of ``query`` found backwards from the end of ``text`` (small: tight, late)."""
    end = pos = len(text)
    for c in reversed(query):
        pos = text.rfind(c, 0, pos)
        if pos < 0:
            return len(text) + 1
    return end - pos
