"""``/undo``, ``/diff`` and ``/rewind``: the app's side (dialogs and notices) of the session's checkpoints.

Each function takes the chat screen (``MainScreen``: the app's state through ``chat.host``, see
``tui/screens/chat_host.py``), checks that the command can run now, opens its dialog and, once the
user confirms, does the work and reports it in the conversation log.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from freeact_tui.agent.rewind import RewindRefused, files_done, name_files, rewind
from freeact_tui.checkpoints.checkpointing import CheckpointsUnavailableHere, UndoPlan, UndoScope, UserTurn
from freeact_tui.checkpoints.limits import SkippedFile
from freeact_tui.checkpoints.records import FileChange
from freeact_tui.checkpoints.shadow_git import CheckpointError
from freeact_tui.text.safe import one_line_summary
from freeact_tui.tui.screens.confirm import ConfirmScreen
from freeact_tui.tui.screens.diff import DiffScreen
from freeact_tui.tui.screens.rewind import RewindChoice, RewindScreen
from freeact_tui.tui.screens.undo import UndoScreen

if TYPE_CHECKING:
    from freeact_tui.agent.agent import Agent
    from freeact_tui.tui.screens.main import MainScreen

async def run(chat: MainScreen, name: str, arg: str) -> None:
    """Run ``/undo``, ``/diff`` or ``/rewind``."""
    if name == "undo":
        await run_undo(chat, arg)
    elif name == "diff":
        await run_diff(chat, arg)
    else:
        await run_rewind(chat)


def _agent(chat: MainScreen, command: str, *, idle: bool) -> Agent | None:
    agent = chat.agent
    if agent is None:
        chat.notify(f"/{command}: no session yet.", severity="warning")
        return None
    if idle and chat.turn_running:
        chat.notify(f"/{command} must wait until the turn ends (Esc cancels it).", severity="warning")
        return None
    return agent


async def run_undo(chat: MainScreen, arg: str) -> None:
    """``/undo`` (the last action) or ``/undo turn``: show the files and diff, undo on confirm."""
    agent = _agent(chat, "undo", idle=True)
    if agent is None:
        return
    scope: UndoScope = "turn" if arg.strip().lower() in ("turn", "t") else "action"
    checkpointing = agent.checkpointing
    try:
        plan = await checkpointing.plan_undo(scope)
    except CheckpointsUnavailableHere as exc:
        await chat.conversation.notice(f"Cannot undo: {exc}", title="Undo")
        return

    async def done(chosen: UndoPlan | None) -> None:
        if chosen is None:
            return
        if chosen.edited:
            await chat.app.push_screen(_edited_warning("undo", chosen.edited), partial(undo, chosen))
            return
        await undo(chosen, True)

    async def undo(chosen: UndoPlan, yes: bool | None) -> None:
        if not yes:
            return
        try:
            result = await checkpointing.undo(chosen)
        except (CheckpointError, OSError) as exc:  # OSError: a file it may not write (e.g. root-owned)
            await chat.conversation.error(f"The undo failed: {exc}", title="Undo")
            return
        lines = [f"Undid {chosen.title}: {files_done(result.restored, result.removed)}."]
        lines += [f"  not restored: {s.path} ({s.reason})" for s in result.not_restorable]
        lines += [f"  not covered (outside the working directory): {p}" for p in chosen.outside]
        lines.append(
            f"/undo again goes further back; the state before this undo is checkpoint {result.backup.short_id}."
        )
        await chat.conversation.notice("\n".join(lines), title="Undo")
        agent.record_notice("Undo", "\n".join(lines))  # a resumed log shows it here too

    await chat.app.push_screen(UndoScreen(plan, checkpointing.plan_undo), done)


async def run_diff(chat: MainScreen, arg: str = "", corr_id: str | None = None) -> None:
    """``/diff``: what the last action changed (or the action ``corr_id``, or ``/diff N``: N actions back)."""
    agent = _agent(chat, "diff", idle=False)
    if agent is None:
        return
    checkpointing = agent.checkpointing
    seq: int | None = None
    if corr_id is None and arg.strip():
        if not arg.strip().isdigit() or int(arg) < 1:
            chat.notify("/diff takes a number: 1 is the last action, 2 the one before, …", severity="error")
            return
        starts = checkpointing.action_starts()
        if int(arg) > len(starts):
            chat.notify(f"This session has {len(starts)} action(s) with a checkpoint.", severity="warning")
            return
        seq = starts[-int(arg)].seq
    try:
        record, diff = await checkpointing.action_diff(corr_id, seq=seq)
    except CheckpointsUnavailableHere as exc:
        chat.notify(f"No diff: {exc}", severity="warning", timeout=6)
        return
    title = f"Changes of {record.kind} action: {one_line_summary(record.summary, 60)}"
    await chat.app.push_screen(DiffScreen(title, diff))


async def run_rewind(chat: MainScreen) -> None:
    """``/rewind``: pick a user message; restore files, conversation or both to the point before it."""
    agent = _agent(chat, "rewind", idle=True)
    if agent is None:
        return
    turns = agent.checkpointing.turns()
    if not turns:
        await chat.conversation.notice("Nothing to rewind: no message yet.", title="Rewind")
        return

    async def picked(choice: tuple[UserTurn, RewindChoice] | None) -> None:
        if choice is None:
            return
        turn, what = choice
        files, conversation = what in ("both", "files"), what in ("both", "conversation")
        if files and not agent.checkpointing.enabled:
            await chat.conversation.notice(
                f"Cannot rewind files: {agent.checkpointing.checkpoints.disabled_reason}", title="Rewind"
            )
            if not conversation:
                return
            files = False
        plan = await agent.checkpointing.plan_rewind(turn)
        message = _rewind_question(
            plan.changes, plan.outside, files=files, conversation=conversation, skipped=plan.skipped
        )
        edited = plan.edited if files else ()
        if edited:
            message += "\n\n" + _edited_text(edited, "rewind")

        async def confirmed(yes: bool | None) -> None:
            if not yes:
                return
            try:
                outcome = await rewind(agent, plan, files=files, conversation=conversation)
            except (RewindRefused, CheckpointError, OSError) as exc:
                await chat.conversation.error(f"The rewind failed: {exc}", title="Rewind")
                return
            if conversation:
                await chat.conversation.clear()
                await chat.show_agent()
                prompt = chat.prompt  # the withdrawn message, ready to edit and send again
                prompt.load_text(turn.text)
                prompt.move_cursor(prompt.document.end)  # typing goes on where the message ends
                prompt.focus()
            await chat.conversation.notice(outcome.summary(), title="Rewind")

        title = f"Rewind to before “{one_line_summary(turn.text, 40)}”?"
        if edited:  # the warning in the title too: Enter does not confirm this one
            title = f"Rewind to before “{one_line_summary(turn.text, 30)}”? {len(edited)} file(s) edited outside the agent"
        await chat.app.push_screen(
            ConfirmScreen(title, message, yes_label="Rewind", default_yes=not edited), confirmed
        )

    await chat.app.push_screen(RewindScreen(turns), picked)


def _rewind_question(
    changes: object,
    outside: tuple[str, ...],
    *,
    files: bool,
    conversation: bool,
    skipped: tuple[SkippedFile, ...] = (),
) -> str:
    parts = []
    if conversation:
        parts.append("The conversation is cut before this message and the kernel restarts.")
    if files:
        found = tuple(c for c in changes if isinstance(c, FileChange)) if isinstance(changes, tuple) else ()
        if found:
            back = [c.path for c in found if c.status != "added"]  # modified or deleted: written back
            gone = [c.path for c in found if c.status == "added"]  # created since: removed
            parts.append(f"Files: {files_done(back, gone)}.")
        else:
            parts.append("No file changed since that point.")
        if outside:
            parts.append("Not covered (outside the working directory): " + ", ".join(outside[:5]) + ".")
        if skipped:
            shown = ", ".join(f"{s.path} ({s.reason})" for s in skipped[:5])
            more = f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""
            parts.append(f"Left as they are (checkpoints skip them): {shown}{more}.")
    return " ".join(parts)


def _edited_text(edited: Sequence[str], what: str) -> str:
    return (
        f"Edited outside the agent since the checkpoint: {name_files(edited)}. The {what} overwrites or "
        "removes them, edits and all. y goes ahead; Enter, n or Esc keeps them."
    )


def _edited_warning(what: str, edited: Sequence[str]) -> ConfirmScreen:
    """The question before an undo or rewind overwrites files edited outside the agent (Enter: no)."""
    return ConfirmScreen(
        f"{len(edited)} file(s) edited outside the agent: {what} anyway?",
        _edited_text(edited, what),
        yes_label=what.capitalize(),
        no_label="Keep my edits",
        default_yes=False,
    )


__all__ = ["run", "run_diff", "run_rewind", "run_undo"]
