"""What an ``/undo`` or a ``/rewind`` would do, shown to the user before it is done."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from freeact_tui.checkpoints.action_log import ActionRecord
from freeact_tui.checkpoints.limits import SkippedFile
from freeact_tui.checkpoints.records import FileChange

UndoScope = Literal["action", "turn"]


@dataclass(frozen=True)
class UndoPlan:
    """What an undo would do: restore ``target`` (the state before ``records``), changing ``changes``."""

    scope: UndoScope
    records: tuple[ActionRecord, ...]
    target: str
    changes: tuple[FileChange, ...]
    diff: str
    outside: tuple[str, ...]
    skipped: tuple[SkippedFile, ...]
    edited: tuple[str, ...] = ()
    """Files the undo would change that were edited outside the agent since the checkpoint."""

    @property
    def title(self) -> str:
        what = "the last action" if self.scope == "action" else "the last turn"
        count = len({r.corr_id for r in self.records})
        return what if self.scope == "action" else f"{what} ({count} action{'s' * (count != 1)})"


@dataclass(frozen=True)
class UserTurn:
    """A user message of the conversation, a point to rewind to."""

    msg_index: int
    text: str
    actions: int


@dataclass(frozen=True)
class RewindPlan:
    """What a rewind to ``turn`` would do to the files (``target`` None: no action changed them since)."""

    turn: UserTurn
    target: str | None
    changes: tuple[FileChange, ...]
    outside: tuple[str, ...]
    skipped: tuple[SkippedFile, ...] = ()
    """Files the checkpoints left out (size limits), at that point or now: a rewind leaves them as they are."""
    edited: tuple[str, ...] = ()
    """Files the rewind would change that were edited outside the agent since the checkpoint."""
