"""Confirm an undo: the files it changes, the diff, and what it cannot cover.

Public interface: ``UndoScreen(plan, load)`` is a ``ModalScreen[UndoPlan | None]``; y/Enter
confirms (dismisses with the plan shown), n/Esc cancels, t switches between the last action and
the last turn (``load`` makes the other plan). ``undo_summary(plan)`` is the text of the files part.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Label, Static

from freeact_tui.checkpoints.checkpointing import CheckpointsUnavailableHere, UndoPlan, UndoScope
from freeact_tui.text.safe import visible
from freeact_tui.tui.screens.dialog_room import FittedDialog
from freeact_tui.tui.screens.diff import diff_content

_STATUS_WORDS = {
    "modified": "modified   ",
    "added": "added      ",
    "deleted": "deleted    ",
}
_STATUS_EFFECT = {
    "modified": "gets its old content back",
    "added": "is removed (created since)",
    "deleted": "is recreated",
}


def undo_summary(plan: UndoPlan) -> str:
    """The files an undo changes and what it cannot cover, as plain text."""
    lines = [f"Restores the files to their state before {plan.title}:"]
    if plan.changes:
        for change in plan.changes:
            lines.append(f"  {_STATUS_WORDS[change.status]}{change.path}  — {_STATUS_EFFECT[change.status]}")
    else:
        lines.append("  no file in the working directory changed since; nothing to restore")
    notes = [f"  {path}  — outside the working directory (named by the action)" for path in plan.outside]
    notes += [f"  {s.path}  — skipped by the checkpoint: {s.reason}" for s in plan.skipped]
    if notes:
        lines.append("Not covered (left as they are):")
        lines.extend(notes)
    lines.append("Only files in the working directory are covered; the kernel's variables are not changed.")
    if plan.diff:
        lines.append("The diff below shows what changed since; the undo reverses it.")
    return visible("\n".join(lines))  # file names may hold escapes


class UndoScreen(FittedDialog[UndoPlan | None]):
    """Show what an undo changes (files and diff) and ask to confirm."""

    FIT = (".checkpoint-dialog", "#undo-diff", 24)  # the part takes what the rest leaves (dialog_room)

    CSS_PATH = "checkpoints.tcss"
    HELP_GROUP = "Undo"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "confirm", "Undo", id="undo.confirm", key_display="y"),
        Binding("n,escape", "cancel", "Cancel", id="undo.cancel", key_display="n"),
        Binding("t", "toggle_scope", "Action/turn", id="undo.toggle"),
    ]

    def __init__(self, plan: UndoPlan, load: Callable[[UndoScope], Awaitable[UndoPlan]]) -> None:
        super().__init__()
        self.plan = plan
        self._load = load

    def compose(self) -> ComposeResult:
        with Vertical(classes="checkpoint-dialog"):
            yield Label("", classes="checkpoint-title", id="undo-title", markup=False)
            yield Static("", classes="checkpoint-summary", id="undo-summary", markup=False)
            with VerticalScroll(classes="checkpoint-diff", id="undo-diff"):
                yield Static("", id="undo-diff-text", markup=False)
            yield Static("", classes="checkpoint-keys", id="undo-keys", markup=False)

    def on_mount(self) -> None:
        self._show()
        self.query_one("#undo-diff").focus()  # arrows and PgUp/PgDn scroll a long diff

    def _show(self) -> None:
        plan = self.plan
        self.query_one("#undo-title", Label).update(visible(f"Undo {plan.title}?", multiline=False))
        self.query_one("#undo-summary", Static).update(undo_summary(plan))
        self.query_one("#undo-diff-text", Static).update(diff_content(plan.diff))
        other = "the last turn" if plan.scope == "action" else "the last action only"
        self.query_one("#undo-keys", Static).update(f"y undo · n cancel · t undo {other} instead")
        self.refit()  # the summary above the diff may have grown or shrunk

    def action_confirm(self) -> None:
        self.dismiss(self.plan)

    def action_cancel(self) -> None:
        self.dismiss(None)

    async def action_toggle_scope(self) -> None:
        scope: UndoScope = "turn" if self.plan.scope == "action" else "action"
        try:
            self.plan = await self._load(scope)
        except CheckpointsUnavailableHere as exc:
            self.notify(str(exc), severity="warning")
            return
        self._show()


__all__ = ["UndoScreen", "undo_summary"]
