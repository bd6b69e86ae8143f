"""The menu drawn just above the prompt: slash commands and skills as ``/`` is typed, files after ``@``
and session ids after ``/resume `` when Tab has more than one candidate.

It never takes focus: the prompt keeps it (so nothing typed is lost) and hands it Up/Down, and
Enter/Tab/Esc while it is open (see ``PromptInput``). Hidden while closed.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from freeact_tui.text.safe import visible
from freeact_tui.tui.completion import Completion, CompletionContext

_NAMES = {"command": "Commands and skills", "session": "Sessions", "path": "Files"}
_TITLES = {
    "command": "↑↓ choose · Enter run · Tab complete · Esc close",
    "session": "↑↓ choose · Enter resume · Tab complete · Esc close",
    "path": "↑↓ choose · Enter/Tab insert · Esc close",
}


_ROWS = 10
"""Rows the menu shows at most (its CSS max-height)."""


class CompletionOptions(OptionList):
    """The candidates (never focused: the prompt keeps the keys)."""

    can_focus = False


class CompletionMenu(Vertical):
    """Candidates for what is typed before the prompt's cursor; ``context`` is what they complete."""

    DEFAULT_CSS = """
    CompletionMenu {
        height: auto;
        margin: 0 1;
        padding: 0 1;
        display: none;
        border: round $primary 60%;
        border-subtitle-color: $text-muted;
        background: $surface;
        & > CompletionOptions {
            height: auto;
            max-height: 10;  /* _ROWS */
            border: none;
            padding: 0;
            background: $surface;
            text-wrap: nowrap;
            text-overflow: ellipsis;
            scrollbar-size-vertical: 1;
        }
        & > #completion-more { color: $text-muted; height: 1; }
    }
    """

    class Clicked(Message):
        """An entry was clicked: taken as Enter takes it."""

        def __init__(self, context: CompletionContext, completion: Completion) -> None:
            super().__init__()
            self.context = context
            self.completion = completion

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.context: CompletionContext | None = None
        self.entries: list[Completion] = []

    def compose(self) -> ComposeResult:
        yield CompletionOptions(id="completion-options", markup=False)
        yield Static("", id="completion-more")

    @property
    def is_open(self) -> bool:
        return bool(self.display) and self.context is not None

    @property
    def options(self) -> CompletionOptions:
        return self.query_one(CompletionOptions)

    def show(self, context: CompletionContext, entries: Sequence[Completion]) -> None:
        """Open (or refresh) with ``entries`` for ``context``; the first one highlighted."""
        if not entries:
            self.close()
            return
        same = self.context is not None and self.context.kind == context.kind
        previous = self.highlighted
        self.context = context
        self.entries = list(entries)
        width = max(len(entry.label) for entry in self.entries)
        options = self.options
        options.set_options(Option(_row(entry, width)) for entry in self.entries)
        # Keep the user's place while the same list is only refreshed (a session list reloaded).
        keep = same and previous is not None and previous.text in [e.text for e in self.entries]
        options.highlighted = [e.text for e in self.entries].index(previous.text) if keep and previous else 0
        self.border_title = _NAMES[context.kind]
        self.border_subtitle = _TITLES[context.kind]
        count = len(self.entries)
        more = self.query_one("#completion-more", Static)
        more.update(f"{count} in all · ↓ for more" if count > _ROWS else "")
        more.display = count > _ROWS
        self.display = True

    def close(self) -> None:
        self.display = False
        self.context = None
        self.entries = []

    @property
    def highlighted(self) -> Completion | None:
        index = self.options.highlighted
        if self.context is None or index is None or not 0 <= index < len(self.entries):
            return None
        return self.entries[index]

    @on(OptionList.OptionSelected)
    def _clicked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.context is not None and 0 <= event.option_index < len(self.entries):
            self.post_message(self.Clicked(self.context, self.entries[event.option_index]))

    def move(self, step: int) -> None:
        """Move the highlight by ``step`` rows, wrapping at the ends (as shell menus do)."""
        count = len(self.entries)
        if count:
            current = self.options.highlighted or 0
            self.options.highlighted = (current + step) % count


def _row(entry: Completion, width: int) -> Content:
    label = visible(entry.label, multiline=False)
    parts: list[str | tuple[str, str]] = [(label.ljust(width), "bold $text-primary")]
    if entry.help:
        parts += ["  ", (visible(entry.help, multiline=False), "$text-muted")]
    return Content.assemble(*parts)
