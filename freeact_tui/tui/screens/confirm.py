"""A yes/no question in a modal dialog.

Public interface: ``ConfirmScreen(title, message, yes_label="Yes", no_label="No")`` is a
``ModalScreen[bool]``; push it with ``await app.push_screen_wait(ConfirmScreen(...))`` inside a worker
or ``app.push_screen(ConfirmScreen(...), callback)``. y or Enter (or the Yes button) dismisses with
``True``; n or Esc (or the No button) with ``False``. Enter on a focused button presses that button;
with ``default_yes=False`` Enter answers no (the No button has the focus) and only y confirms.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static


class ConfirmScreen(ModalScreen[bool]):
    """Ask the user to confirm an action; the result is ``True`` for yes."""

    CSS_PATH = "confirm.tcss"
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("enter", "default", "Yes", show=False),
        Binding("n", "answer(False)", "No", id="confirm.no"),
        Binding("escape", "answer(False)", "No", show=False),
    ]

    def __init__(
        self,
        title: str,
        message: str,
        *,
        yes_label: str = "Yes",
        no_label: str = "No",
        default_yes: bool = True,
    ) -> None:
        """Build the dialog.

        Args:
            title: A short question, e.g. "Delete this session?".
            message: One or two sentences on what happens.
            yes_label: The confirming button's text.
            no_label: The cancelling button's text.
            default_yes: What Enter answers (False where yes may lose the user's work: only y confirms).
        """
        super().__init__()
        self._title = title
        self._message = message
        self._yes_label = yes_label
        self._no_label = no_label
        self._default_yes = default_yes

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Label(self._title, id="confirm-title", markup=False)
            yield Static(self._message, id="confirm-message", markup=False)
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self._yes_label} (y)", id="confirm-yes", variant="primary")
                yield Button(f"{self._no_label} (n)", id="confirm-no")

    def on_mount(self) -> None:
        if not self._default_yes:  # Enter on the focused button answers no
            self.query_one("#confirm-no", Button).focus()

    def action_default(self) -> None:
        """Enter: the safe answer where yes may lose work, yes otherwise."""
        self.dismiss(self._default_yes)

    def action_answer(self, yes: bool) -> None:
        """Close the dialog with the answer."""
        self.dismiss(yes)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")
