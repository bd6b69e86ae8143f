"""A one-line marker under the log: new output arrived below while the user is scrolled up."""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widgets import Static


class NewOutputMarker(Static):
    """Shown while output arrives below the viewport; a click (or the screen's key) jumps to it.

    Args:
        key: The key that jumps to the latest output, named in the marker's text.
    """

    DEFAULT_CSS = """
    NewOutputMarker {
        display: none;
        height: 1;
        width: 100%;
        margin: 0 1;
        text-align: center;
        background: $accent 30%;
        color: $text;
        &.-shown { display: block; }
        &:hover { background: $accent 50%; }
    }
    """

    class Clicked(Message):
        """The user clicked the marker: jump to the latest output."""

    def __init__(self, key: str, *, id: str | None = None) -> None:
        super().__init__(f"↓ new output below · {key} or click to follow", id=id, markup=False)

    def show(self, shown: bool) -> None:
        self.set_class(shown, "-shown")

    @property
    def shown(self) -> bool:
        return self.has_class("-shown")

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(self.Clicked())
