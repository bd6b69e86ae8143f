"""Dialogs of checkpoints: confirm an undo (files, diff, what is not covered), show a diff, pick a
turn to rewind to.

Public interface:

- ``diff_content(diff)``: a unified diff as coloured ``Content`` (additions, removals, hunks, headers).
- ``UndoScreen(plan, load)``: a ``ModalScreen[UndoPlan | None]``; y/Enter confirms (dismisses with
  the plan shown), n/Esc cancels, t switches between the last action and the last turn (``load``
  makes the other plan).
- ``DiffScreen(title, diff)``: a ``ModalScreen[None]``; Esc/q closes.
- ``RewindScreen(turns)``: a ``ModalScreen[tuple[UserTurn, RewindChoice] | None]``; Up/Down pick a
  user message, b/Enter rewinds both, c the conversation only, f the files only, Esc cancels.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from freeact_tui.agent.checkpointing import CheckpointsUnavailableHere, UndoPlan, UndoScope, UserTurn

RewindChoice = Literal["both", "conversation", "files"]

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

_CSS = """
UndoScreen, DiffScreen, RewindScreen {
    align: center middle;
    background: $background 60%;
}
.checkpoint-dialog {
    width: 100;
    max-width: 95%;
    height: auto;
    max-height: 90%;
    padding: 0 1;
    border: round $warning;
    background: $surface;
}
DiffScreen .checkpoint-dialog, RewindScreen .checkpoint-dialog { border: round $primary; }
.checkpoint-title { text-style: bold; color: $text-warning; width: 100%; }
DiffScreen .checkpoint-title, RewindScreen .checkpoint-title { color: $text-primary; }
.checkpoint-summary { margin: 1 0 0 0; }
.checkpoint-diff { height: auto; max-height: 24; margin: 1 0 0 0; border: none; }
.checkpoint-diff > Static { width: auto; }
.checkpoint-keys { color: $text-muted; margin: 1 0 0 0; }
RewindScreen OptionList { height: auto; max-height: 20; margin: 1 0 0 0; }
"""


def diff_content(diff: str) -> Content:
    """A unified diff, coloured: additions green, removals red, hunk headers and file headers marked."""
    if not diff.strip():
        return Content.styled("No file changed.", "dim")
    pieces: list[Content | str | tuple[str, str]] = []
    for line in diff.rstrip("\n").split("\n"):
        if line.startswith(
            ("diff --git", "+++ ", "--- ", "rename ", "new file", "deleted file", "similarity")
        ):
            pieces.append((line, "bold"))
        elif line.startswith("@@"):
            pieces.append((line, "$text-accent"))
        elif line.startswith("+"):
            pieces.append((line, "$text-success"))
        elif line.startswith("-"):
            pieces.append((line, "$text-error"))
        elif line.startswith(("index ", "Binary files")):
            pieces.append((line, "dim"))
        else:
            pieces.append(line)
        pieces.append("\n")
    return Content.assemble(*pieces[:-1])


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
    return "\n".join(lines)


class UndoScreen(ModalScreen[UndoPlan | None]):
    """Show what an undo changes (files and diff) and ask to confirm."""

    DEFAULT_CSS = _CSS
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
        self.query_one("#undo-title", Label).update(f"Undo {plan.title}?")
        self.query_one("#undo-summary", Static).update(undo_summary(plan))
        self.query_one("#undo-diff-text", Static).update(diff_content(plan.diff))
        other = "the last turn" if plan.scope == "action" else "the last action only"
        self.query_one("#undo-keys", Static).update(f"y undo · n cancel · t undo {other} instead")

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


class DiffScreen(ModalScreen[None]):
    """A coloured unified diff of what an action changed."""

    DEFAULT_CSS = _CSS
    HELP_GROUP = "Diff"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="diff.close", key_display="Esc"),
    ]

    def __init__(self, title: str, diff: str) -> None:
        super().__init__()
        self._title = title
        self._diff = diff

    def compose(self) -> ComposeResult:
        with Vertical(classes="checkpoint-dialog"):
            yield Label(self._title, classes="checkpoint-title", markup=False)
            with VerticalScroll(classes="checkpoint-diff", id="diff-scroll"):
                yield Static(diff_content(self._diff), id="diff-text", markup=False)
            yield Static("Esc close · ↑↓ PgUp PgDn scroll", classes="checkpoint-keys", markup=False)

    def on_mount(self) -> None:
        self.query_one("#diff-scroll").focus()

    def action_close(self) -> None:
        self.dismiss(None)


class RewindScreen(ModalScreen[tuple[UserTurn, RewindChoice] | None]):
    """Pick a user message to rewind to, and what to rewind (files, conversation, both)."""

    DEFAULT_CSS = _CSS
    HELP_GROUP = "Rewind"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("b,enter", "choose('both')", "Both", id="rewind.both", key_display="b", priority=True),
        Binding("c", "choose('conversation')", "Conversation", id="rewind.conversation"),
        Binding("f", "choose('files')", "Files", id="rewind.files"),
        Binding("escape", "cancel", "Cancel", id="rewind.cancel"),
    ]

    def __init__(self, turns: Sequence[UserTurn]) -> None:
        super().__init__()
        self.turns = list(turns)

    def compose(self) -> ComposeResult:
        with Vertical(classes="checkpoint-dialog"):
            yield Label("Rewind to before which message?", classes="checkpoint-title", markup=False)
            options = []
            for number, turn in enumerate(self.turns, start=1):
                text = " ".join(turn.text.split())
                text = text if len(text) <= 60 else text[:59] + "…"
                actions = f"{turn.actions} action{'s' * (turn.actions != 1)}"
                options.append(
                    Option(
                        Content.assemble(
                            (f"{number:>3}  ", "$text-muted"), text, (f"  ({actions})", "$text-muted")
                        )
                    )
                )
            yield OptionList(*options, id="rewind-turns")
            yield Static(
                "b/Enter files and conversation · c conversation only · f files only · Esc cancel\n"
                "The conversation is cut before the chosen message and the kernel restarts; files come "
                "back from the checkpoint before the first action since.",
                classes="checkpoint-keys",
                markup=False,
            )

    def on_mount(self) -> None:
        turns = self.query_one("#rewind-turns", OptionList)
        turns.highlighted = len(self.turns) - 1
        turns.focus()

    def action_choose(self, choice: RewindChoice) -> None:
        index = self.query_one("#rewind-turns", OptionList).highlighted
        if index is None:
            return
        self.dismiss((self.turns[index], choice))

    def action_cancel(self) -> None:
        self.dismiss(None)


__all__ = ["DiffScreen", "RewindChoice", "RewindScreen", "UndoScreen", "diff_content", "undo_summary"]
