"""A coloured unified diff of what an action changed, in a dialog.

Public interface: ``diff_content(diff)`` colours a unified diff (additions, removals, hunks,
headers); ``DiffScreen(title, diff)`` is a ``ModalScreen[None]`` that shows it (Esc/q closes,
arrows and PgUp/PgDn scroll). The dialogs of checkpoints share ``checkpoints.tcss``.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Label, Static

from freeact_tui.tui.screens.dialog_room import FittedDialog


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


class DiffScreen(FittedDialog[None]):
    """A coloured unified diff of what an action changed."""

    FIT = (".checkpoint-dialog", "#diff-scroll", 24)  # the part takes what the rest leaves (dialog_room)

    CSS_PATH = "checkpoints.tcss"
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


__all__ = ["DiffScreen", "diff_content"]
