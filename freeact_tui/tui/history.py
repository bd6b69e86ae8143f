"""Prompt history: what the user typed before, across sessions, browsed with Up/Down in the prompt.

Public interface (the prompt widget owns one instance):

- ``PromptHistory(path=None, max_entries=1000)`` — loads ``path`` (default
  ``default_history_path()``: ``history.jsonl`` next to ``paths.state_file()``).
- ``append(text)`` after a prompt is sent: skips blanks and a repeat of the last entry, persists
  at once, and resets the cursor.
- ``previous(draft) -> str | None`` on Up: the older entry (``None`` at the oldest); the first call
  keeps ``draft`` (what was being typed) so that ``next()`` past the newest entry gives it back.
- ``next() -> str | None`` on Down: the newer entry, then the draft, then ``None``.
- ``reset()``: leave browsing (e.g. when the user edits the text).

The file is JSON Lines (``{"text": …}`` per line), mode 0600. ``append`` adds one line (cheap, safe
with two app instances); the file is compacted atomically to ``max_entries`` once it holds twice as
many lines, after copying a file with damaged lines to ``history.jsonl.bak``. Damaged lines are skipped
on load (``load_warning`` says so); an unreadable file gives an empty history and is never written to.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from freeact_tui.project import paths


def default_history_path() -> Path:
    """Where prompt history lives by default (beside the UI state file)."""
    return paths.state_file().parent / "history.jsonl"


class PromptHistory:
    """Persistent, deduplicated prompt history with a browsing cursor."""

    def __init__(self, path: Path | None = None, max_entries: int = 1000) -> None:
        """Load the history.

        Args:
            path: The JSON Lines file; ``default_history_path()`` when ``None``.
            max_entries: The newest entries kept (older ones are dropped on the next write).

        Raises:
            ValueError: ``max_entries`` is not positive.
        """
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.path = path if path is not None else default_history_path()
        self.max_entries = max_entries
        self.load_warning: str | None = None
        self._writable = True
        self._disk_lines = 0
        self._damaged = 0
        self._needs_newline = False
        self._entries: list[str] = self._load()
        self._cursor: int | None = None  # index into _entries while browsing
        self._draft = ""

    @property
    def entries(self) -> list[str]:
        """All entries, oldest first (a copy)."""
        return list(self._entries)

    @property
    def browsing(self) -> bool:
        """True while Up/Down navigation is under way."""
        return self._cursor is not None

    def __len__(self) -> int:
        return len(self._entries)

    def _load(self) -> list[str]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            self._writable = False  # never clobber a file we could not read
            self.load_warning = f"Prompt history {self.path} could not be read: {exc.strerror}"
            return []
        # A crash mid-write leaves a last line without newline; the next append must not join it.
        self._needs_newline = bool(raw) and not raw.endswith(b"\n")
        entries: list[str] = []
        damaged = 0
        for line in raw.decode("utf-8", errors="replace").splitlines():
            if not line.strip():
                continue
            self._disk_lines += 1
            try:
                text = json.loads(line)["text"]
            except (ValueError, KeyError, TypeError):
                damaged += 1
                continue
            if isinstance(text, str) and text.strip() and (not entries or entries[-1] != text):
                entries.append(text)
            elif not isinstance(text, str):
                damaged += 1
        self._damaged = damaged
        if damaged:
            self.load_warning = f"Prompt history {self.path}: skipped {damaged} damaged line(s)"
        return entries[-self.max_entries :]

    def _append_line(self, text: str) -> None:
        line = json.dumps({"text": text}, ensure_ascii=False) + "\n"
        if self._needs_newline:
            line = "\n" + line
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
        self._needs_newline = False
        self._disk_lines += 1

    def _compact(self) -> None:
        if self._damaged:
            # Keep what we could not parse, so that compaction loses nothing the user might want back.
            backup = self.path.with_name(self.path.name + ".bak")
            paths.atomic_write_text(backup, self.path.read_text(encoding="utf-8", errors="replace"))
            self._damaged = 0
        body = "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in self._entries)
        paths.atomic_write_text(self.path, body, mode=0o600)
        self._disk_lines = len(self._entries)

    def append(self, text: str) -> bool:
        """Record a sent prompt and persist the history.

        Args:
            text: The prompt as sent.

        Returns:
            True if it was added (False for blank text or a repeat of the newest entry).

        Raises:
            OSError: the file cannot be written (the entry is still kept in memory).
        """
        self.reset()
        if not text.strip() or (self._entries and self._entries[-1] == text):
            return False
        self._entries.append(text)
        del self._entries[: -self.max_entries]
        if self._writable:
            self._append_line(text)
            if self._disk_lines > 2 * self.max_entries:
                self._compact()
        return True

    def previous(self, draft: str = "") -> str | None:
        """Step to the older entry.

        Args:
            draft: The text in the prompt now; remembered on the first step so ``next()`` restores it.

        Returns:
            The older entry, or ``None`` when there is none (the cursor stays at the oldest).
        """
        if not self._entries:
            return None
        if self._cursor is None:
            self._draft = draft
            self._cursor = len(self._entries) - 1
            return self._entries[self._cursor]
        if self._cursor == 0:
            return None
        self._cursor -= 1
        return self._entries[self._cursor]

    def next(self) -> str | None:
        """Step to the newer entry.

        Returns:
            The newer entry; past the newest, the draft kept by ``previous()``; ``None`` when not browsing.
        """
        if self._cursor is None:
            return None
        if self._cursor >= len(self._entries) - 1:
            draft = self._draft
            self.reset()
            return draft
        self._cursor += 1
        return self._entries[self._cursor]

    def reset(self) -> None:
        """Stop browsing; the next ``previous()`` starts from the newest entry again."""
        self._cursor = None
        self._draft = ""

    def clear(self) -> None:
        """Forget every entry and remove the file."""
        self.reset()
        self._entries.clear()
        self._disk_lines = 0
        self._needs_newline = False
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


__all__ = ["PromptHistory", "default_history_path"]
