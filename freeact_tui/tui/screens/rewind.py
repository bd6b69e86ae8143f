"""Pick a user message to rewind to, and what to rewind: files, conversation or both.

Public interface: ``RewindScreen(turns)`` is a ``ModalScreen[tuple[UserTurn, RewindChoice] | None]``;
Up/Down pick a message (the newest is highlighted), b/Enter rewinds both, c the conversation only,
f the files only, Esc cancels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from freeact_tui.checkpoints.checkpointing import UserTurn
from freeact_tui.text.safe import one_line_summary
from freeact_tui.tui.screens.dialog_room import FittedDialog

RewindChoice = Literal["both", "conversation", "files"]


class RewindScreen(FittedDialog[tuple[UserTurn, RewindChoice] | None]):
    """Pick a user message to rewind to, and what to rewind (files, conversation, both)."""

    FIT = (".checkpoint-dialog", "#rewind-turns", 20)  # the part takes what the rest leaves (dialog_room)

    CSS_PATH = "checkpoints.tcss"
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
                text = one_line_summary(turn.text, 60)
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


__all__ = ["RewindChoice", "RewindScreen"]
