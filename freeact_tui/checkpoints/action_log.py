"""The action log of a session: which checkpoint was taken before which action, and what was undone.

``<session>/checkpoints.log`` holds one JSON object a line, appended in order: ``action`` (the
checkpoint before an action, its tool call, agent and turn), ``undo`` (actions whose changes were
reverted) and ``cut`` (the conversation was rewound). Not ``.jsonl``: it is not a history (freeact
and the listing's size ignore it). Also: which paths outside the working directory an action names.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from freeact_tui.project import files as projectfiles
from freeact_tui.project.own_writes import AppendHash, resume_hash
from freeact_tui.project.trust import own_mark, store_own_marks
from freeact_tui.toolcalls import CodeAction, JsonToolCall, ProgrammaticToolCall, ToolCall

ACTION_LOG = "checkpoints.log"
_MAX_LOG = 256 * 1024 * 1024  # a bigger log (or a FIFO, a device) is not read: its entries are not listed

# A path literal in code or a command: absolute, home-relative or leading out of the directory.
_PATH_RE = re.compile(r"""(?<![\w.:/~-])((?:~|\.\.)?/[\w.@+,%=-][^\s'"`;|&<>(){}\[\],]*)""")
_NOT_FILES = ("/dev/", "/proc/", "/sys/")


@dataclass(frozen=True)
class ActionRecord:
    """One action and the checkpoint of the working directory taken just before it."""

    checkpoint: str | None
    corr_id: str
    agent_id: str
    msg_index: int
    """Index (in the main history) of the user request whose turn ran the action."""
    kind: str
    summary: str
    outside: tuple[str, ...] = ()
    """Paths outside the working directory that the action names (writes there are not covered)."""
    error: str | None = None
    ts: str = ""
    seq: int = 0
    """The action's position in the log (ids of tool calls need not be unique)."""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ActionRecord:
        return cls(
            checkpoint=data.get("checkpoint"),
            corr_id=str(data.get("corr_id", "")),
            agent_id=str(data.get("agent_id", "main")),
            msg_index=int(data.get("msg_index", 0)),
            kind=str(data.get("kind", "")),
            summary=str(data.get("summary", "")),
            outside=tuple(str(p) for p in data.get("outside", ())),
            error=data.get("error"),
            ts=str(data.get("ts", "")),
            seq=int(data.get("seq", 0)),
        )


class ActionLog:
    """The session's ``checkpoints.log``: actions, undos and conversation cuts, in order.

    Without a session (persistence off) the log lives in memory only.
    """

    def __init__(self, path: Path | None, *, own: bool = False) -> None:
        """``own``: the log is in a project's session store, where every byte the app appends is marked as
        its own (``ownwrites``): an edit by anyone else asks for trust again."""
        self.path = path
        self._own = own
        self._hash: AppendHash | None = None
        self.entries: list[dict[str, Any]] = []
        if path is not None and path.is_file():
            for line in self._lines(path):
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a torn last line after a crash
                if isinstance(entry, dict):
                    self.entries.append(entry)

    @staticmethod
    def _lines(path: Path) -> list[str]:
        try:
            return projectfiles.read_text(path, limit=_MAX_LOG, errors="replace").splitlines()
        except OSError:
            return []  # not a regular file, or past the bound: no earlier entries are known

    def add(self, entry: dict[str, Any]) -> None:
        entry = {**entry, "ts": datetime.now(UTC).isoformat()}
        if entry.get("type") == "action":
            entry["seq"] = sum(1 for e in self.entries if e.get("type") == "action")
        self.entries.append(entry)
        if self.path is None:
            return
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            if self._own:
                self._hash = resume_hash(self._hash, self.path, os.fstat(fd).st_size, own_mark)
            line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
            if self._hash is not None:
                self._hash.update(line)
                if (mark := self._hash.mark(os.fstat(fd))) is not None:
                    store_own_marks({self.path: mark})
        finally:
            os.close(fd)

    def actions(self) -> list[ActionRecord]:
        """Every action ever logged, oldest first."""
        return [ActionRecord.from_json(e) for e in self.entries if e.get("type") == "action"]

    def live(self, *, with_undone: bool = False) -> list[ActionRecord]:
        """The actions of the current conversation whose changes were not undone, oldest first."""
        live: list[ActionRecord] = []
        for entry in self.entries:
            match entry.get("type"):
                case "action":
                    live.append(ActionRecord.from_json(entry))
                case "undo" if not with_undone:
                    undone = set(entry.get("seqs", ()))
                    live = [r for r in live if r.seq not in undone]
                case "cut":
                    keep = int(entry.get("keep", 0))
                    live = [r for r in live if r.msg_index < keep]
        return live


def named_paths_outside(calls: Sequence[ToolCall], root: Path) -> list[str]:
    """Paths outside ``root`` that the calls name (a heuristic: writes there cannot be undone)."""
    texts: list[str] = []
    for call in calls:
        match call:
            case CodeAction(code=code):
                texts.append(code)
            case JsonToolCall(tool_args=args) | ProgrammaticToolCall(args=args):
                texts.append(json.dumps(args, ensure_ascii=False))
            case _:
                texts.append(call.display_text())
    found: list[str] = []
    for text in texts:
        for match_ in _PATH_RE.finditer(text):
            raw = match_.group(1).rstrip(".:")
            path = Path(os.path.normpath(Path(raw).expanduser() if raw.startswith("~") else root / raw))
            shown = str(path)
            if not any(c.isalnum() for c in raw) or shown.startswith(_NOT_FILES) or shown == "/dev/null":
                continue
            if path != root and root not in path.parents and shown not in found:
                found.append(shown)
    return found[:20]


__all__ = ["ACTION_LOG", "ActionLog", "ActionRecord", "named_paths_outside"]
