"""The prompt: a multi-line text area where Enter sends and Up/Down at the edges browse earlier prompts.

While the completion menu above it is open (``menu``, set by the screen), Up/Down move in the menu,
Enter and Tab take its highlighted entry and Esc closes it; the text stays as typed. Tab with the menu
closed asks to complete what is before the cursor (a ``/command``, an ``@path``, a ``/resume`` id) and
moves the focus on only when there is nothing to complete.
"""

from __future__ import annotations

from typing import Protocol

from rich.text import Text
from textual import events
from textual.message import Message
from textual.widgets import TextArea

from freeact_tui.text.safe import visible_in_place
from freeact_tui.tui.completion import Completion, CompletionContext, completion_context
from freeact_tui.tui.history import PromptHistory
from freeact_tui.tui.pastes import PastedTexts
from freeact_tui.tui.widgets.completion_menu import CompletionMenu

_NEWLINE_KEYS = {"ctrl+j", "alt+enter", "shift+enter", "ctrl+enter"}


class ScrollableLog(Protocol):
    def scroll_by_key(self, key: str) -> None: ...


def scrolls_log(key: str, line_count: int, text: str) -> bool:
    """Whether ``key`` in the prompt scrolls the log: PageUp/PageDown while the prompt has one line (it
    has nothing to page through), Home/End while it is empty (with text they move the cursor)."""
    if key in ("pageup", "pagedown"):
        return line_count <= 1
    return key in ("home", "end") and not text


class PromptInput(TextArea):
    """Multi-line prompt. Enter sends; Ctrl+J / Alt+Enter insert a newline; Esc asks to cancel or clear.

    Args:
        history: Earlier prompts (browsed with Up/Down at the first/last line); the user's file by default.
    """

    DEFAULT_CSS = """
    PromptInput {
        background: transparent;
        height: auto;
        min-height: 3;
        max-height: 12;
        border: round $primary 50%;
        &:focus { border: round $primary; }
        &.-busy { border: round $secondary 70%; }
        &:disabled { border: round $error 50%; }
    }
    """

    class Submitted(Message):
        """The user pressed Enter; ``text`` is what to send."""

        def __init__(self, prompt: PromptInput, text: str) -> None:
            super().__init__()
            self.prompt = prompt
            self.text = text

    class Escaped(Message):
        """The user pressed Esc in the prompt (the screen cancels the turn or clears the input)."""

    class MentionRequested(Message):
        """The user typed ``@`` at the start of a word (the screen opens the file picker)."""

    class HelpRequested(Message):
        """The user typed ``?`` into an empty prompt (the screen opens the help)."""

    class CompletionRequested(Message):
        """Tab with something to complete before the cursor and the menu closed."""

        def __init__(self, context: CompletionContext) -> None:
            super().__init__()
            self.context = context

    class CompletionChosen(Message):
        """Enter (``run``) or Tab took the menu's highlighted entry for ``context``."""

        def __init__(self, context: CompletionContext, completion: Completion, run: bool) -> None:
            super().__init__()
            self.context = context
            self.completion = completion
            self.run = run

    class MenuDismissed(Message):
        """Esc closed the menu (it stays closed until the text changes)."""

    def __init__(self, *, history: PromptHistory | None = None, id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        self.prompt_history = history if history is not None else PromptHistory()
        self.menu: CompletionMenu | None = None
        """The menu the screen draws above the prompt; its keys come from here while it is open."""
        self.pastes = PastedTexts()
        """Long pastes of the draft, shown as placeholders (``message`` has them whole)."""
        self.scroll_log: ScrollableLog | None = None
        """The conversation log, which PageUp/PageDown (Home/End: an empty prompt) scroll (``scrolls_log``)."""

    @property
    def message(self) -> str:
        """The draft as it is sent: long pastes whole in place of their placeholders."""
        return self.pastes.expand(self.text)

    async def _on_paste(self, event: events.Paste) -> None:
        token = None if self.read_only else self.pastes.fold(event.text)
        if token is None:
            await super()._on_paste(event)
            return
        event.stop()
        event.prevent_default()
        self.insert(token)

    def get_line(self, line_index: int) -> Text:
        """A line as drawn: a pasted or mentioned name's control characters shown, never sent."""
        line = super().get_line(line_index)
        shown = visible_in_place(line.plain)
        return line if shown == line.plain else Text(shown, end="", no_wrap=True)

    def remember(self, text: str) -> None:
        """Add a sent prompt to the history (a write failure is reported, the prompt is kept in memory)."""
        try:
            self.prompt_history.append(text)
        except OSError as exc:
            self.notify(f"Prompt history not saved: {exc}", severity="warning")

    def browse(self, step: int) -> bool:
        """Show an earlier (``step=-1``) or later (``+1``) prompt; returns False at the ends."""
        text = self.prompt_history.previous(self.text) if step < 0 else self.prompt_history.next()
        if text is None:
            return False
        self._set(text)
        if self.menu is not None:  # a browsed "/help" opens no menu: Up/Down keep browsing
            self.post_message(self.MenuDismissed())
        return True

    def _set(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    def start_with(self, command: str) -> None:
        """Put ``command`` (e.g. ``/task-planning``) at the start, dropping an ``@`` just typed before
        the cursor (the picker it came from was opened by it); what else was typed follows."""
        row, column = self.cursor_location
        if column and self.document.get_line(row)[column - 1] == "@":
            self.delete((row, column - 1), (row, column))
        rest = self.text.strip()
        self._set(f"{command} {rest}" if rest else f"{command} ")

    def clear_input(self) -> None:
        """Empty the prompt and stop browsing."""
        self.prompt_history.reset()
        self.load_text("")
        self.pastes.clear()

    def completion_context(self) -> CompletionContext | None:
        """What the text before the cursor asks to complete (``None``: nothing)."""
        row, column = self.cursor_location
        if self.selection.start != self.selection.end:
            return None
        return completion_context(self.document.get_line(row)[:column], row)

    def replace_fragment(self, context: CompletionContext, text: str, *, final: bool) -> None:
        """Put ``text`` in place of what ``context`` completes (a space after it when ``final``)."""
        row, column = self.cursor_location
        line = self.document.get_line(row)
        after = line[column:]
        suffix = " " if final and not after.startswith(" ") else ""
        self.replace(text + suffix, (row, context.start), (row, column))
        self.move_cursor((row, context.start + len(text) + len(suffix)))

    def _menu_key(self, key: str) -> bool:
        """Handle ``key`` for the open menu; False when the menu is closed or does not take it."""
        menu = self.menu
        if menu is None or not menu.is_open or menu.context is None:
            return False
        if key in ("up", "down"):
            menu.move(-1 if key == "up" else 1)
        elif key in ("pageup", "pagedown"):
            menu.move(-5 if key == "pageup" else 5)
        elif key in ("enter", "tab"):
            chosen = menu.highlighted
            if chosen is None:
                return False
            self.post_message(self.CompletionChosen(menu.context, chosen, run=key == "enter"))
        elif key == "escape":
            menu.close()
            self.post_message(self.MenuDismissed())
        else:
            return False
        return True

    def _at_word_start(self) -> bool:
        row, column = self.cursor_location
        return column == 0 or self.document.get_line(row)[column - 1 : column].isspace()

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        if self.read_only:
            return
        if self._menu_key(key):
            event.stop()
            event.prevent_default()
        elif self.scroll_log is not None and scrolls_log(key, self.document.line_count, self.text):
            event.stop()
            event.prevent_default()
            self.scroll_log.scroll_by_key(key)
        elif key == "tab" and (context := self.completion_context()) is not None:
            event.stop()
            event.prevent_default()
            self.post_message(self.CompletionRequested(context))
        elif key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self, self.message))
        elif key in _NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")
        elif key == "question_mark" and not self.text:
            event.stop()
            event.prevent_default()
            self.post_message(self.HelpRequested())
        elif event.character == "@" and self._at_word_start():
            event.stop()
            event.prevent_default()
            self.insert("@")
            self.post_message(self.MentionRequested())
        elif key == "escape":
            event.stop()
            event.prevent_default()
            self.post_message(self.Escaped())
        elif key == "up" and self.cursor_location[0] == 0 and self.browse(-1):
            event.stop()
            event.prevent_default()
        elif key == "down" and self.cursor_location[0] == self.document.line_count - 1 and self.browse(+1):
            event.stop()
            event.prevent_default()
        else:
            await super()._on_key(event)
