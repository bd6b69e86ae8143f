"""The rules screen (``/permissions``): every permission rule, where it lives, and keys to remove or change one.

Public interface: ``PermissionsScreen(rules)`` is a ``ModalScreen[None]`` over a ``PermissionRules``.
Each row is a rule: its effect, kind, pattern, where it lives (this session, the user's file, the
freeact project file, built in) and a note (a code rule that is not an exact cell is broad). Keys:
``x``/Delete removes the rule, ``a``/``k``/``d`` make it allow/ask/deny, ``e`` edits its pattern, Esc
closes. A built-in rule cannot be removed; changing it adds a user rule that overrides it.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Label

from freeact_tui.effects import class_of
from freeact_tui.permissions.cells import is_cell_pattern
from freeact_tui.permissions.patterns import rule_words
from freeact_tui.permissions.rules import (
    Effect,
    PermissionRules,
    PermissionsFileError,
    RuleEntry,
    folder_reason,
    folder_relative,
)
from freeact_tui.project.freeact_dir import FreeactConfigError
from freeact_tui.text.safe import visible as made_visible

_GROUP = Binding.Group("Rules")
_BROAD = "broad: any code may follow"
_WHERE = {
    "session": "this session",
    "always": "user file",
    "folder": "this folder",
    "project": "freeact project",
    "default": "built in",
}


def where(entry: RuleEntry) -> str:
    """Where a rule lives, in words; an effect rule of "this folder" saved user-wide (before such rules were
    kept per folder) applies in any folder, and says so."""
    if entry.scope == "always" and folder_relative(entry.kind, entry.pattern, entry.effect):
        return "user file (any folder)"
    return _WHERE[entry.scope]


def folder_note(entry: RuleEntry, folder: str) -> str:
    """Why a rule is kept with its folder, and which folder (``folder_reason``); an old user-wide one says it
    applies in any folder all the same. Empty for a rule that means the same everywhere."""
    reason = folder_reason(entry.kind, entry.pattern, entry.effect)
    if entry.scope == "folder":
        return f" — only in {folder}" + (f": {reason}" if reason else "")
    if entry.scope == "always" and reason is not None:
        return f" — applies in any folder, though {reason}"
    return ""


def visible(text: str) -> str:
    """One line of ``text`` with the table's characters shown (a rule from a project file never drives the terminal)."""
    return made_visible(text, multiline=False)


def pattern_text(entry: RuleEntry) -> str:
    """How a pattern reads in the list: an effect rule and an exact-cell rule in words, never a hash."""
    if is_cell_pattern(entry.pattern) or class_of(entry.pattern) is not None:
        return visible(rule_words(entry.kind, entry.pattern, entry.effect))
    return visible(entry.pattern)


_PADDING = 2  # a DataTable cell's padding, both sides


def column_widths(entries: list[RuleEntry], room: int) -> dict[str, int]:
    """The columns' widths so the table fits ``room`` cells: effect, kind and where in full; the pattern
    and the note share the rest (each whole when both fit, else the note gets up to a half). A cut cell is
    shown in full under the table when its row is highlighted."""
    natural = {
        "effect": max([len("effect"), *(len(e.effect) for e in entries)]),
        "kind": max([len("kind"), *(len(e.kind) for e in entries)]),
        "pattern": max([len("pattern"), *(len(pattern_text(e)) for e in entries)]),
        "where": max([len("where"), *(len(where(e)) for e in entries)]),
        "note": max([len("note"), *(len(_BROAD) for e in entries if e.broad)]),
    }
    rest = room - _PADDING * len(natural) - natural["effect"] - natural["kind"] - natural["where"]
    if natural["pattern"] + natural["note"] > rest:
        natural["note"] = min(natural["note"], max(len("note"), rest // 2))
        natural["pattern"] = max(len("pattern"), rest - natural["note"])
    return natural


class PermissionsScreen(ModalScreen[None]):
    """Lists the rules of ``rules`` and removes or changes the highlighted one from the keyboard."""

    CSS_PATH = "permissions.tcss"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("x,delete", "remove", "Remove", id="permissions.remove", group=_GROUP, key_display="x"),
        Binding("a", "effect('allow')", "Allow", id="permissions.allow", group=_GROUP),
        Binding("k", "effect('ask')", "Ask", id="permissions.ask", group=_GROUP),
        Binding("d", "effect('deny')", "Deny", id="permissions.deny", group=_GROUP),
        Binding("e", "edit", "Edit pattern", id="permissions.edit", group=_GROUP),
        Binding("escape", "close", "Close", id="permissions.close"),
    ]

    def __init__(self, rules: PermissionRules) -> None:
        super().__init__()
        self.rules = rules
        self.entries: list[RuleEntry] = []
        self._editing: RuleEntry | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="permissions-dialog") as dialog:
            dialog.border_title = "Permission rules"
            yield Label(Content(self._sources_text()), id="permissions-sources")
            table: DataTable[Text] = DataTable(id="permissions-table", cursor_type="row", zebra_stripes=True)
            yield table
            yield Label("", id="permissions-detail")
            yield Input(id="permissions-pattern", placeholder="pattern")
            yield Label(
                "x remove · a allow · k ask · d deny · e edit pattern · Esc close",
                id="permissions-keys",
            )

    def _sources_text(self) -> str:
        user = str(self.rules.path) if self.rules.path else "(not saved)"
        project = str(self.rules.project_file) if self.rules.project_file else "none"
        return visible(f"user file: {user}   ·   freeact project file: {project}")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        self.query_one("#permissions-pattern", Input).display = False
        self.refill()
        self.call_after_refresh(self.refill)  # again with the width the table was laid out at
        table.focus()

    def refill(self, keep: int | None = None) -> None:
        """Show the rules as they are now; the cursor stays on row ``keep`` (or where it was)."""
        table = self.query_one(DataTable)
        row = table.cursor_row if keep is None else keep
        table.clear(columns=True)
        every = self.rules.rules()
        # The rules a user can remove first (each group in precedence order), the built-in ones after.
        self.entries = [e for e in every if e.scope != "default"] + [e for e in every if e.scope == "default"]
        for name, width in column_widths(self.entries, self._table_room()).items():
            table.add_column(name, width=width, key=name)
        for entry in self.entries:
            note = Text(_BROAD, style="bold red") if entry.broad else Text("")
            table.add_row(
                Text(
                    entry.effect, style={"deny": "bold red", "ask": "yellow", "allow": "green"}[entry.effect]
                ),
                Text(entry.kind),
                Text(pattern_text(entry)),
                Text(where(entry)),
                note,
            )
        if self.entries:
            table.move_cursor(row=max(0, min(row, len(self.entries) - 1)))
        self._show_detail()

    def _table_room(self) -> int:
        """The cells' width: the table's, or before it is laid out the dialog's share of the screen."""
        table = self.query_one(DataTable)
        if table.size.width:
            return max(20, table.scrollable_content_region.width)
        return max(20, min(140, self.app.size.width * 95 // 100) - 7)  # border, padding, scrollbar

    def on_resize(self) -> None:
        self.call_after_refresh(self.refill)  # once the table has its new width

    def on_data_table_row_highlighted(self) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        """The highlighted rule in full, wrapped: a narrow table cuts its pattern and note."""
        entry = self.current
        text = ""
        if entry is not None:
            text = f"{entry.effect} {entry.kind}: {pattern_text(entry)} ({where(entry)})"
            text += visible(folder_note(entry, str(self.rules.working_dir)))
            if entry.broad:
                text += " — broad: any code may follow"
        self.query_one("#permissions-detail", Label).update(Content(text))

    @property
    def current(self) -> RuleEntry | None:
        table = self.query_one(DataTable)
        if not self.entries or not 0 <= table.cursor_row < len(self.entries):
            return None
        return self.entries[table.cursor_row]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self._editing is not None and action in ("remove", "effect", "edit"):
            return False  # letters type into the pattern input
        return True

    def action_remove(self) -> None:
        """Ask first (a rule the user saved is not typed again in a moment); a built-in one says why it stays."""
        from freeact_tui.tui.screens.confirm import ConfirmScreen

        entry = self.current
        if entry is None:
            return
        if entry.scope == "default":
            self._guard(lambda: self.rules.remove(entry))
            return
        named = f"{entry.effect} {entry.kind}:{pattern_text(entry)} ({where(entry)})"

        def answered(yes: bool | None) -> None:
            if yes and self._guard(lambda: self.rules.remove(entry)):
                self.notify(f"Removed {named}.")
                self.refill()

        self.app.push_screen(
            ConfirmScreen("Remove this rule?", f"{named} will no longer apply.", yes_label="Remove"), answered
        )

    def action_effect(self, effect: Effect) -> None:
        entry = self.current
        if entry is None or entry.effect == effect:
            return
        if self._guard(lambda: self.rules.change(entry, effect=effect)):
            self.notify(f"{entry.kind}:{pattern_text(entry)} now {effect}s.")
            self.refill()

    def action_edit(self) -> None:
        entry = self.current
        if entry is None:
            return
        self._editing = entry
        field = self.query_one("#permissions-pattern", Input)
        field.value = entry.pattern
        field.display = True
        field.focus()
        self.refresh_bindings()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        entry, pattern = self._editing, event.value.strip()
        if entry is None:
            return
        if not pattern:
            self.notify("Enter a pattern, or press Esc to keep the rule as it is.", severity="warning")
            return
        if pattern == entry.pattern or self._guard(
            lambda: self.rules.change(entry, effect=entry.effect, pattern=pattern)
        ):
            self._stop_editing()
            self.refill()

    def action_close(self) -> None:
        if self._editing is not None:
            self._stop_editing()
        else:
            self.dismiss(None)

    def _stop_editing(self) -> None:
        self._editing = None
        field = self.query_one("#permissions-pattern", Input)
        field.value = ""  # what was typed and left is gone: never one Enter from saving it
        field.display = False
        self.query_one(DataTable).focus()
        self.refresh_bindings()

    def _guard(self, change: object) -> bool:
        """Run ``change``; a refusal or a file error is told, and the rules stay as they were."""
        try:
            change()  # type: ignore[operator]
        except (ValueError, PermissionsFileError, FreeactConfigError) as exc:
            self.notify(visible(str(exc)), severity="error", timeout=8)
            return False
        return True


__all__ = ["PermissionsScreen", "pattern_text", "visible"]
