"""Rewind a session to the point before one of the user's messages: its files, its conversation, or both.

The conversation is cut in the session file as well as in memory: the whole file is archived in
the session's ``rewound/`` folder, then replaced atomically by the kept lines and a rewind marker
(see ``Session.rewind``), so freeact loads the cut history too. The kernel is restarted (its state
cannot be rewound), and the model is told with the next user message. Files come back from the
checkpoint taken before the first action at or after that point.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from freeact_tui.checkpoints.checkpointing import RewindPlan, UserTurn
from freeact_tui.checkpoints.records import RestoreResult
from freeact_tui.store.event_record import is_event_record
from freeact_tui.store.rewind_file import RewindMark
from freeact_tui.store.sessions import SessionDamaged
from freeact_tui.text.safe import one_line

if TYPE_CHECKING:
    from freeact_tui.agent.agent import Agent


class RewindRefused(Exception):
    """The rewind cannot run now; ``str(error)`` says why."""



def rewind_note(turn: UserTurn, *, files: bool, conversation: bool) -> str:
    """What the model is told after a rewind."""
    quoted = " ".join(turn.text.split())[:80]
    parts = []
    if conversation:
        parts.append(
            f"[Note: the user rewound the conversation to before their message “{quoted}”; the later "
            "messages were withdrawn. The Python kernel was restarted: variables, imports and "
            "definitions from earlier code actions are gone."
        )
    else:
        parts.append(f"[Note: the user rewound the files to the point before their message “{quoted}”.")
    if files:
        parts.append("Files in the working directory were restored to their state at that point.]")
    else:
        parts.append("Files in the working directory were not restored.]")
    return " ".join(parts)


@dataclass(frozen=True)
class RewindOutcome:
    """What a rewind did."""

    plan: RewindPlan
    restored: RestoreResult | None
    conversation_cut: bool
    kernel_restarted: bool
    files: bool = True
    mark: RewindMark | None = None

    def summary(self) -> str:
        lines = []
        if self.conversation_cut:
            lines.append(
                f"The conversation was rewound to before “{one_line(self.plan.turn.text, 60)}”."
            )
            lines.append(
                "The kernel was restarted (its state cannot be rewound)."
                if self.kernel_restarted
                else "The kernel was not running; the next action starts a fresh one."
            )
        if self.restored is not None:
            r = self.restored
            lines.append(f"Files: {files_done(r.restored, r.removed)}.")
            lines.extend(f"  not restored: {s.path} ({s.reason})" for s in r.not_restorable)
        elif self.files:
            lines.append("Files: no action changed files since that point; nothing to restore.")
        else:
            lines.append("Files were left as they are.")
        for path in self.plan.outside if self.files else ():
            lines.append(f"  not covered (outside the working directory): {path}")
        return "\n".join(lines)


async def rewind(agent: Agent, plan: RewindPlan, *, files: bool, conversation: bool) -> RewindOutcome:
    """Rewind ``agent``'s session to the point before ``plan.turn``.

    Raises:
        RewindRefused: a turn is running, or there is nothing to do.
        CheckpointError: restoring the files failed (the conversation is then left as it was).
    """
    if agent.busy:
        raise RewindRefused("A turn is running; rewind when it ends (Esc cancels it).")
    if not files and not conversation:
        raise RewindRefused("Choose files, conversation or both.")
    if conversation and agent.session_locked is not None:
        raise RewindRefused(
            f"This session is open in another freeact-tui (pid {agent.session_locked.pid}); it is read-only here."
        )
    checkpointing = agent.checkpointing
    restored = await checkpointing.restore_files(plan) if files else None
    keep = plan.turn.msg_index
    note = rewind_note(plan.turn, files=files, conversation=conversation)
    kernel_restarted = False
    mark: RewindMark | None = None
    if conversation:
        recorder, session = agent.recorder, agent.session
        lines = recorder.cut_lines(keep)
        if session is not None:  # the file first: if it cannot be rewritten, nothing is cut
            try:
                mark = await asyncio.to_thread(session.rewind, lines, note)
            except (OSError, SessionDamaged, ValueError) as exc:
                done = "The files were restored, but the" if restored is not None else "The"
                raise RewindRefused(
                    f"{done} conversation could not be rewound (it is unchanged): {exc}"
                ) from exc
        else:
            dropped = recorder.stored[lines:]
            turns = sum(1 for m in dropped if _starts_turn(m))
            mark = RewindMark(lines, sum(1 for m in dropped if not is_event_record(m)), turns, None, note)
        recorder.cut(keep, mark)
        checkpointing.cut(keep)
        kernel_restarted = agent.kernel_state == "ready"
        await agent.restart_kernel()
    checkpointing.notes.withdraw(keep, cut=conversation)  # e.g. an /undo note about a withdrawn action
    checkpointing.notes.tell(note, about=keep)
    return RewindOutcome(plan, restored, conversation, kernel_restarted, files, mark)


def name_files(paths: Sequence[str], most: int = 6) -> str:
    """``"a.txt, b.txt and 3 more"``."""
    shown = ", ".join(paths[:most])
    return shown + (f" and {len(paths) - most} more" if len(paths) > most else "")


def files_done(restored: Sequence[str], removed: Sequence[str]) -> str:
    """``"0 restored, 1 removed (hello.txt)"``: what happened to how many files, and to which."""
    return ", ".join(
        f"{len(paths)} {word}" + (f" ({name_files(paths)})" if paths else "")
        for paths, word in ((restored, "restored"), (removed, "removed"))
    )


def _starts_turn(message: object) -> bool:
    from pydantic_core import to_jsonable_python

    from freeact_tui.store.rewind_file import is_user_turn

    return is_user_turn(to_jsonable_python(message, bytes_mode="base64"))


__all__ = ["RewindOutcome", "RewindRefused", "files_done", "name_files", "rewind"]
