"""Messages typed while a turn runs: listed under the log as "Queued (n)", sent when the turn ends.

Each item can be put back into the prompt (Enter) or removed (Delete/Backspace). The list is hidden
while empty. The screen takes items with ``pop_next()`` when a turn ends.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from freeact_tui.text.safe import one_line_summary

_PREVIEW = 100


def _preview(text: str) -> str:
    return one_line_summary(text, _PREVIEW)


class QueuedList(OptionList):
    """The items; Delete/Backspace removes the highlighted one, Enter edits it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("delete,backspace", "remove", "Remove queued", show=False),
    ]

    def action_remove(self) -> None:
        parent = self.parent
        if isinstance(parent, QueuedMessages) and self.highlighted is not None:
            parent.remove_at(self.highlighted)


class QueuedMessages(Vertical):
    """The queue of messages waiting for the running turn to end."""

    DEFAULT_CSS = """
    QueuedMessages {
        height: auto;
        max-height: 8;
        margin: 0 1;
        display: none;
        & > #queued-title { color: $text-muted; height: 1; }
        & > QueuedList { height: auto; max-height: 6; border: none; padding: 0; background: transparent; }
    }
    """

    class EditRequested(Message):
        """The user chose a queued item: it left the queue and goes back to the prompt."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static("", id="queued-title", markup=False)
        yield QueuedList()

    def push(self, text: str, *, first: bool = False) -> None:
        """Add a message at the end (or at the front)."""
        self.items.insert(0 if first else len(self.items), text)
        self._render_items()

    def pop_next(self) -> str | None:
        """Take the first message (``None`` when the queue is empty)."""
        if not self.items:
            return None
        text = self.items.pop(0)
        self._render_items()
        return text

    def remove_at(self, index: int) -> str:
        text = self.items.pop(index)
        self._render_items()
        return text

    def _render_items(self) -> None:
        self.display = bool(self.items)
        self.query_one("#queued-title", Static).update(
            f"Queued ({len(self.items)}) · sent when the turn ends · Enter edits · Del removes · "
            "Alt+S in the prompt sends into the turn"
        )
        options = self.query_one(QueuedList)
        highlighted = options.highlighted
        options.clear_options()
        options.add_options(
            [Option(Content(f"› {_preview(t)}")) for t in self.items]  # made visible once, by the preview
        )
        if self.items:
            options.highlighted = min(highlighted or 0, len(self.items) - 1)
        elif options.has_focus:
            self.screen.focus_next()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        text = self.remove_at(event.option_index)
        self.post_message(self.EditRequested(text))
