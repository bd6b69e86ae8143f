"""Checkpoints of a session: one before each approved action that can write, and what undo, rewind
and diff do with them.

The engine (``checkpoints/engine.py``) records states of the working directory; this module
ties them to the conversation. Every checkpoint taken before an action is logged in the session's
``checkpoints.log`` (append-only, next to ``main.jsonl``; freeact ignores it) with the tool call
and the user turn it belongs to, so ``/undo``, ``/rewind`` and ``/diff`` work after a resume too.

The hook is ``Checkpointing.before_action(calls, corr_id, agent_id)``: call it after approval and
before the action runs (the code tool, each shell command or script inside a cell, an MCP call, a
file tool). It never raises; when checkpoints are off (config, remote mode, no git) it does nothing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart

from freeact_tui.actions.code import CheckpointFn
from freeact_tui.checkpoints.action_log import ACTION_LOG, ActionLog, ActionRecord, named_paths_outside
from freeact_tui.checkpoints.actions import ActionCheckpoints
from freeact_tui.checkpoints.limits import CheckpointLimits, SkippedFile
from freeact_tui.checkpoints.model_notes import ModelNotes
from freeact_tui.checkpoints.plans import RewindPlan, UndoPlan, UndoScope, UserTurn
from freeact_tui.checkpoints.records import RestoreResult
from freeact_tui.checkpoints.shadow_git import CheckpointError
from freeact_tui.events import AgentEvent, CheckpointNotice
from freeact_tui.text.userwords import user_words
from freeact_tui.toolcalls import ToolCall

if TYPE_CHECKING:
    from freeact_tui.agent.settings import Settings
    from freeact_tui.store.sessions import Session

_logger = logging.getLogger(__name__)
HOUSEKEEP_EVERY = 20
"""Checkpoints between two housekeeping runs of the shadow repository (``git gc --auto``)."""


class CheckpointsUnavailableHere(Exception):
    """``/undo``, ``/rewind`` or ``/diff`` cannot work now; ``str(error)`` tells the user why."""


@dataclass
class Checkpointing:
    """A session's checkpoints and its action log.

    Args:
        checkpoints: The working directory's checkpoint store (maybe off, with the reason).
        log: The session's action log.
        history: The main agent's history now (for the turn an action belongs to).
    """

    checkpoints: ActionCheckpoints
    log: ActionLog
    history: Callable[[], list[ModelMessage]]
    notes: ModelNotes = field(init=False)
    """What goes to the model with the next user message (after an undo or a rewind)."""
    housekeep_every: int = HOUSEKEEP_EVERY
    notify: Callable[[AgentEvent], None] | None = None
    """Where the user is told what a checkpoint left out or why it failed (``Agent.publish``)."""
    _told: set[str] = field(default_factory=set, init=False, repr=False)
    _since_housekeeping: int = field(default=0, init=False, repr=False)
    _housekeeping: asyncio.Task[None] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.notes = ModelNotes(self.history)

    @classmethod
    def create(
        cls, settings: Settings, session: Session | None, history: Callable[[], list[ModelMessage]]
    ) -> Checkpointing:
        checkpoints = ActionCheckpoints.create(
            enabled=settings.checkpoints,
            execution=settings.execution,
            working_dir=settings.working_dir,
            sessions_dir=settings.sessions_dir,
            limits=CheckpointLimits(
                max_file_bytes=settings.checkpoint_max_file_bytes,
                max_binary_bytes=settings.checkpoint_max_binary_bytes,
                max_files=settings.checkpoint_max_files,
            ),
        )
        log = ActionLog(session.dir / ACTION_LOG, own=session.in_project) if session is not None else ActionLog(None)
        return cls(checkpoints, log, history)

    @property
    def enabled(self) -> bool:
        return self.checkpoints.enabled

    # -- the hook ------------------------------------------------------------------------------

    def hook(self, agent_id: str) -> CheckpointFn | None:
        """The callable the dispatcher calls before each approved action of ``agent_id``."""
        if not self.checkpoints.enabled:
            return None

        async def before(calls: Sequence[ToolCall], corr_id: str) -> None:
            await self.before_action(calls, corr_id, agent_id)

        return before

    async def before_action(self, calls: Sequence[ToolCall], corr_id: str, agent_id: str = "main") -> None:
        """Checkpoint the working directory before an approved action that can write, and log it."""
        if not self.checkpoints.enabled or not calls:
            return
        summary = " · ".join(_one_line(c.display_text()) for c in calls)
        kind = calls[0].kind
        meta = {"corr_id": corr_id, "agent_id": agent_id, "kind": kind}
        failure: str | None = None
        try:
            made = await self.checkpoints.before_action(f"before {kind}: {summary[:100]}", meta)
        except OSError as exc:  # e.g. the data directory is not writable: the action still runs
            made, failure = None, f"the checkpoint store could not be written: {exc}"
            _logger.warning("%s", failure)
        root = self.checkpoints.root
        if made is None and not self.checkpoints.enabled:  # turned itself off (e.g. too many files)
            self._tell(self.checkpoints.disabled_reason or "Checkpoints are off.", agent_id, corr_id)
            return
        outside = named_paths_outside(calls, root) if root is not None else []
        entry: dict[str, Any] = {
            "type": "action",
            "checkpoint": made.id if made is not None else None,
            "corr_id": corr_id,
            "agent_id": agent_id,
            "msg_index": self.turn_start(),
            "kind": kind,
            "summary": summary[:300],
            "outside": outside,
        }
        if made is None:
            entry["error"] = failure or self.checkpoints.last_error or "the checkpoint failed"
            self._tell(
                f"No checkpoint before this action ({entry['error']}): /undo cannot revert it.",
                agent_id,
                corr_id,
            )
        else:
            self._tell_skipped(made.skipped, agent_id, corr_id)
        try:
            self.log.add(entry)
        except OSError:
            pass  # the checkpoint exists; only its link to this action is lost
        self._since_housekeeping += 1
        if self._since_housekeeping >= self.housekeep_every:
            self.housekeep_soon()

    def _tell(self, text: str, agent_id: str, corr_id: str) -> None:
        if self.notify is not None:
            self.notify(CheckpointNotice(text, agent_id=agent_id, corr_id=corr_id))

    def _tell_skipped(self, skipped: Sequence[SkippedFile], agent_id: str, corr_id: str) -> None:
        """Name the files a checkpoint left out, each once a session (they are skipped every time)."""
        new = [s for s in skipped if s.path not in self._told]
        if not new:
            return
        self._told.update(s.path for s in new)
        lines = [f"  {s.path} — {s.reason}" for s in new[:10]]
        if len(new) > 10:
            lines.append(f"  … and {len(new) - 10} more")
        self._tell(
            "Not in the checkpoint before this action, so /undo and /rewind cannot restore them:\n"
            + "\n".join(lines)
            + "\n(limits: checkpoint_max_file_bytes, checkpoint_max_binary_bytes in the config)",
            agent_id,
            corr_id,
        )

    # -- housekeeping ----------------------------------------------------------------------------

    def housekeep_soon(self) -> None:
        """Start a housekeeping run of the shadow repository in the background (one at a time).

        git runs as a subprocess, off the event loop: the UI and approvals go on, and checkpoints
        taken meanwhile do not wait for it (see ``CheckpointStore.gc``).
        """
        store = self.checkpoints.store
        if store is None or (self._housekeeping is not None and not self._housekeeping.done()):
            return
        self._since_housekeeping = 0
        self._housekeeping = asyncio.get_running_loop().create_task(self._housekeep(store))

    @staticmethod
    async def _housekeep(store: Any) -> None:
        try:
            await store.gc()
        except (CheckpointError, OSError) as exc:  # the next run tries again; checkpoints go on
            _logger.warning("housekeeping of the checkpoint store failed: %s", exc)

    async def close(self) -> None:
        """Stop a housekeeping run that is still going (git cleans up after itself; the next one redoes it)."""
        task, self._housekeeping = self._housekeeping, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def after_turn(self) -> None:
        """Checkpoint the working directory after a turn whose actions were checkpointed.

        What changes between this state and the next action (or now) was not done by the agent:
        undo and rewind ask before they overwrite it (``edited_outside``). Never raises.
        """
        last = next((e for e in reversed(self.log.entries) if e.get("type") in ("action", "after")), None)
        if not self.checkpoints.enabled or last is None or last.get("type") != "action":
            return
        try:
            made = await self.checkpoints.before_action("after turn", {"after": True})
        except OSError:  # the data directory is not writable: the next action says so
            return
        if made is None:
            return
        try:
            self.log.add({"type": "after", "checkpoint": made.id})
        except OSError:
            pass  # only the warning about later outside edits is lost

    async def edited_outside(self, since_seq: int, paths: Sequence[str]) -> tuple[str, ...]:
        """Which of ``paths`` were changed outside the agent after the action ``since_seq`` began.

        Outside changes are those between the state after a turn (or after an undo) and the next
        action's checkpoint, or the working directory now.
        """
        wanted = set(paths)
        if not wanted or self.checkpoints.store is None:
            return ()
        spans: list[tuple[str, str | None]] = []
        seen, since = False, None
        for entry in self.log.entries:
            kind = entry.get("type")
            seen = seen or (kind == "action" and entry.get("seq") == since_seq)
            if not seen:
                continue
            if kind == "after" and entry.get("checkpoint"):
                since = entry["checkpoint"]
            elif kind == "undo" and entry.get("restored_to"):
                since = entry["restored_to"]  # the files are as the app left them
            elif kind == "action" and entry.get("checkpoint") and since is not None:
                spans.append((since, entry["checkpoint"]))
                since = None
        if since is not None:
            spans.append((since, None))
        edited: dict[str, None] = {}
        for start, end in spans:
            try:
                changed = await self.checkpoints.store.changes(start, end)
            except CheckpointError:
                continue  # a checkpoint gone (housekeeping): no warning rather than no undo
            edited.update((c.path, None) for c in changed if c.path in wanted)
        return tuple(edited)

    def turn_start(self) -> int:
        """Index of the user request that started the current (or last) turn."""
        history = self.history()
        for index in range(len(history) - 1, -1, -1):
            if _user_text(history[index]) is not None:
                return index
        return 0

    # -- undo -----------------------------------------------------------------------------------

    def _require(self) -> None:
        if not self.checkpoints.enabled:
            raise CheckpointsUnavailableHere(
                self.checkpoints.disabled_reason or "Checkpoints are off, so nothing can be undone."
            )

    async def plan_undo(self, scope: UndoScope = "action") -> UndoPlan:
        """What undoing the last action (or every action of the last turn) would change.

        Raises:
            CheckpointsUnavailableHere: checkpoints are off, or there is nothing to undo.
        """
        self._require()
        live = self.log.live()
        if not live:
            raise CheckpointsUnavailableHere("Nothing to undo: no action of this session changed files.")
        last = live[-1]
        records: list[ActionRecord] = []
        for record in reversed(live):  # the trailing run of the same action (or turn)
            if record.msg_index != last.msg_index or (scope == "action" and _key(record) != _key(last)):
                break
            records.insert(0, record)
        first = records[0]
        if first.checkpoint is None:
            raise CheckpointsUnavailableHere(
                f"No checkpoint was taken before that action, so it cannot be undone: {first.error}"
            )
        store = self._store()
        try:
            target = await store.get(first.checkpoint)
            changes = await store.changes(target)
            diff = await store.diff(target) if changes else ""
        except CheckpointError as exc:
            raise CheckpointsUnavailableHere(str(exc)) from exc
        outside = tuple(dict.fromkeys(p for r in records for p in r.outside))
        edited = await self.edited_outside(first.seq, [c.path for c in changes])
        return UndoPlan(
            scope, tuple(records), target.id, tuple(changes), diff, outside, target.skipped, edited
        )

    async def undo(self, plan: UndoPlan) -> RestoreResult:
        """Restore the files to ``plan.target`` and log it (a second undo goes one action further back).

        Raises:
            CheckpointError: git failed (nothing is logged then).
        """
        result = await self._store().restore(plan.target)
        self.log.add({"type": "undo", "seqs": [r.seq for r in plan.records], "restored_to": plan.target})
        self.housekeep_soon()
        changed = len(result.restored) + len(result.removed)
        self.notes.tell(
            f"[Note: the user undid the file changes of {plan.title} ({changed} file(s) restored or removed "
            "in the working directory). The kernel's variables were not changed.]",
            about=plan.records[0].msg_index,
        )
        return result

    # -- diff -----------------------------------------------------------------------------------

    def action_starts(self) -> list[ActionRecord]:
        """The first record of each action (its checkpoints in a row), oldest first."""
        starts: list[ActionRecord] = []
        previous: ActionRecord | None = None
        for record in self.log.actions():
            if previous is None or _key(record) != _key(previous):
                starts.append(record)
            previous = record
        return starts

    async def action_diff(
        self, corr_id: str | None = None, *, seq: int | None = None
    ) -> tuple[ActionRecord, str]:
        """The unified diff of what one action changed: the action with tool call id ``corr_id``
        (its latest run), or whose first record is ``seq``, or by default the last action not undone.

        It runs from the checkpoint before the action to the next checkpoint taken after it (or the
        working directory now, for the newest action).

        Raises:
            CheckpointsUnavailableHere: checkpoints are off, or no checkpoint for that action.
        """
        self._require()
        starts = self.action_starts()
        if corr_id is None and seq is None:
            live = self.log.live()
            if not live:
                raise CheckpointsUnavailableHere("No action of this session has a checkpoint yet.")
            seq = max(r.seq for r in starts if r.seq <= live[-1].seq)
        found = [
            n for n, r in enumerate(starts) if (r.seq == seq if seq is not None else r.corr_id == corr_id)
        ]
        if not found:
            raise CheckpointsUnavailableHere(
                "No checkpoint was taken before this action (it may not write files, or it ran "
                "before checkpoints were on)."
            )
        n = found[-1]
        record = starts[n]
        if record.checkpoint is None:
            raise CheckpointsUnavailableHere(f"The checkpoint before this action failed: {record.error}")
        later = starts[n + 1].seq if n + 1 < len(starts) else None
        after = next(
            (
                r.checkpoint
                for r in self.log.actions()
                if later is not None and r.seq >= later and r.checkpoint
            ),
            None,
        )
        try:
            return record, await self._store().diff(record.checkpoint, after)
        except CheckpointError as exc:
            raise CheckpointsUnavailableHere(str(exc)) from exc

    # -- rewind ---------------------------------------------------------------------------------

    def turns(self) -> list[UserTurn]:
        """The user messages of the conversation, oldest first."""
        live = self.log.live(with_undone=True)
        found = []
        for index, message in enumerate(self.history()):
            text = _user_text(message)
            if text is not None:  # the user's words, without the notes and shell output put before them
                found.append(UserTurn(index, user_words(text), 0))
        counted = []
        for n, turn in enumerate(found):
            end = found[n + 1].msg_index if n + 1 < len(found) else 1 << 62
            actions = len({r.corr_id for r in live if turn.msg_index <= r.msg_index < end})
            counted.append(UserTurn(turn.msg_index, turn.text, actions))
        return counted

    async def plan_rewind(self, turn: UserTurn) -> RewindPlan:
        """What restoring the files to the point before ``turn`` would change."""
        records = [r for r in self.log.live() if r.msg_index >= turn.msg_index]
        outside = tuple(dict.fromkeys(p for r in records for p in r.outside))
        if not self.checkpoints.enabled or not records or records[0].checkpoint is None:
            return RewindPlan(turn, None, (), outside)
        target = records[0].checkpoint
        skipped: tuple[SkippedFile, ...] = ()
        try:
            changes = await self._store().changes(target)
            latest = await self._store().latest()
            found = [*(await self._store().get(target)).skipped, *(latest.skipped if latest else ())]
            skipped = tuple({s.path: s for s in found}.values())  # then, or now: either way left as is
        except CheckpointError:
            changes = []
        edited = await self.edited_outside(records[0].seq, [c.path for c in changes])
        return RewindPlan(turn, target, tuple(changes), outside, skipped, edited)

    async def restore_files(self, plan: RewindPlan) -> RestoreResult | None:
        """Bring the files back to the point before ``plan.turn`` (None: nothing to restore)."""
        if plan.target is None:
            return None
        result = await self._store().restore(plan.target)
        seqs = [r.seq for r in self.log.live() if r.msg_index >= plan.turn.msg_index]
        self.log.add({"type": "undo", "seqs": seqs, "restored_to": plan.target})
        self.housekeep_soon()
        return result

    def cut(self, keep: int) -> None:
        """Log that the conversation was cut to its first ``keep`` messages."""
        self.log.add({"type": "cut", "keep": keep})

    def _store(self) -> Any:
        store = self.checkpoints.store
        if store is None:
            raise CheckpointsUnavailableHere(self.checkpoints.disabled_reason or "Checkpoints are off.")
        return store


def _key(record: ActionRecord) -> tuple[str, str, int]:
    """What tells one action from the next: ids of tool calls repeat across agents and turns."""
    return record.agent_id, record.corr_id, record.msg_index


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _user_text(message: ModelMessage) -> str | None:
    """The user's text of a request that starts a turn, or None for other messages."""
    if not isinstance(message, ModelRequest):
        return None
    for part in message.parts:
        if isinstance(part, UserPromptPart):
            if isinstance(part.content, str):
                return part.content
            return " ".join(c for c in part.content if isinstance(c, str)) or "(multimodal message)"
    return None


__all__ = [
    "ACTION_LOG",
    "ActionLog",
    "ActionRecord",
    "Checkpointing",
    "CheckpointsUnavailableHere",
    "RewindPlan",
    "UndoPlan",
    "UndoScope",
    "UserTurn",
    "named_paths_outside",
]
