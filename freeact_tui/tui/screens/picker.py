"""A list to choose one value from: the model, the theme, a session to resume.

Public interface: ``PickerScreen(title, items, more=None, typed=None)`` is a ``ModalScreen[str | None]``.
The current value (``PickerItem.current``) is marked ``●`` and highlighted when it opens. Typing
filters (words anywhere in the label or detail), Up/Down/PageUp/PageDown move, Enter takes the
highlighted value, Esc dismisses with ``None``. ``more`` is an async loader of further items (a
server's model list) run in a worker while the list is already usable; when it raises, its message
is shown under the list. With ``typed`` set (a hint such as "a model name"), Enter on a filter that
matches nothing takes the typed text itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from freeact_tui.text.safe import visible


@dataclass(frozen=True)
class PickerItem:
    """One value: what it is (``value``), how it is shown, and whether it is the one in use."""

    value: str
    label: str
    detail: str = ""
    current: bool = False


class PickerLoadError(Exception):
    """A loader of more items failed; ``str(error)`` is shown to the user as is."""


class ListModal(ModalScreen[str | None]):
    """A modal choosing from one ``OptionList`` while a filter ``Input`` keeps the focus: the arrow and
    page keys move the list's highlight, Esc dismisses with ``None``, a click dismisses with the row's id."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", show=False),
        Binding("down", "move(1)", show=False),
        Binding("up", "move(-1)", show=False),
        Binding("pagedown", "move(10)", show=False),
        Binding("pageup", "move(-10)", show=False),
    ]

    def action_move(self, step: int) -> None:
        options = self.query_one(OptionList)
        if options.option_count:
            current = options.highlighted or 0
            options.highlighted = max(0, min(options.option_count - 1, current + step))

    def action_close(self) -> None:
        self.dismiss(None)

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)


class PickerScreen(ListModal):
    """Choose one of ``items``; dismisses with its value (or the typed text), or ``None``."""

    CSS_PATH = "picker.tcss"

    def __init__(
        self,
        title: str,
        items: Sequence[PickerItem],
        *,
        more: Callable[[], Awaitable[list[PickerItem]]] | None = None,
        loading: str = "Loading…",
        typed: str | None = None,
        noun: str = "items",
    ) -> None:
        """Build the picker.

        Args:
            title: What is chosen, e.g. "Model".
            items: The values known at once, in the order shown.
            more: Loads further values (appended when they arrive; values already listed are skipped).
            loading: The status line while ``more`` runs.
            typed: What typed text means when it matches nothing (``None``: typed text is only a filter).
            noun: What the items are, plural, for the count under the list ("models").
        """
        super().__init__()
        self.title_text = title
        self.items: list[PickerItem] = list(items)
        self._more = more
        self._loading = loading
        self._typed = typed
        self._noun = noun
        self.shown: list[PickerItem] = []
        self.status = ""

    def compose(self) -> ComposeResult:
        with Vertical(id="picker-box") as box:
            box.border_title = self.title_text
            box.border_subtitle = "↑↓ choose · Enter take · Esc close"
            hint = "Type to filter" + (f", or type {self._typed}" if self._typed else "")
            yield Input(placeholder=hint, id="picker-filter")
            yield OptionList(id="picker-options", markup=False)
            yield Static("", id="picker-status")

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        self._show("", keep_current=True)
        if self._more is not None:
            self._set_status(self._loading)
            self.run_worker(self._load_more(self._more), exclusive=True, exit_on_error=False)
        else:
            self._set_status(self._count_text())

    async def _load_more(self, more: Callable[[], Awaitable[list[PickerItem]]]) -> None:
        try:
            extra = await more()
        except PickerLoadError as exc:
            self._set_status(str(exc), error=True)
            return
        except Exception as exc:  # any loader failure is said, the list stays usable
            self._set_status(f"{type(exc).__name__}: {exc}", error=True)
            return
        known = {item.value for item in self.items}
        self.items += [item for item in extra if item.value not in known]
        self._show(self.query_one(Input).value, keep_current=False)
        self._set_status(self._count_text())

    def _count_text(self) -> str:
        if len(self.shown) != len(self.items):
            return f"{len(self.shown)} of {len(self.items)} {self._noun}"
        # "1 model", not "1 models": the nouns given are plain plurals
        noun = self._noun[:-1] if len(self.items) == 1 and self._noun.endswith("s") else self._noun
        return f"{len(self.items)} {noun}"

    def _set_status(self, text: str, *, error: bool = False) -> None:
        self.status = text
        status = self.query_one("#picker-status", Static)
        status.update(Content(visible(text)))
        status.set_class(error, "-error")

    @on(Input.Changed, "#picker-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self._show(event.value, keep_current=False)
        if not self.status.startswith(self._loading):
            self._set_status(
                self._count_text() if self.shown or not self._typed else f"Enter: use {event.value!r}"
            )

    def _show(self, query: str, *, keep_current: bool) -> None:
        words = query.lower().split()
        options = self.query_one(OptionList)
        highlighted = options.highlighted_option.id if options.highlighted_option else None
        self.shown = [
            item for item in self.items if all(w in f"{item.label} {item.detail}".lower() for w in words)
        ]
        width = max((len(item.label) for item in self.shown), default=0)
        options.set_options(Option(_row(item, width), id=item.value) for item in self.shown)
        values = [item.value for item in self.shown]
        current = next((item.value for item in self.shown if item.current), None)
        target = current if keep_current or highlighted is None else highlighted
        if target in values:
            options.highlighted = values.index(target)
        elif values:
            options.highlighted = 0

    @on(Input.Submitted, "#picker-filter")
    def _submitted(self, event: Input.Submitted) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is not None and self.shown:
            self.dismiss(self.shown[options.highlighted].value)
        elif self._typed and event.value.strip():
            self.dismiss(event.value.strip())


def _row(item: PickerItem, width: int) -> Content:
    mark = ("● ", "bold $success") if item.current else "  "
    parts: list[str | tuple[str, str]] = [
        mark,
        (visible(item.label, multiline=False).ljust(width), "$foreground"),
    ]
    if item.detail:
        parts += ["  ", (visible(item.detail, multiline=False), "$text-muted")]
    if item.current:
        parts += ["  ", ("current", "italic $success")]
    return Content.assemble(*parts)
