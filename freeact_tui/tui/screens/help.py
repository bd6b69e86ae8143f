"""The help screen: every key binding of the screen below it, grouped, and every slash command.

Public interface: ``HelpScreen(bindings=None, commands=COMMANDS)`` is a ``ModalScreen[None]``. Push it
from the app's F1 / ``?`` action: ``self.push_screen(HelpScreen())``. When ``bindings`` is ``None`` the
screen reads them from the screen that is active when it is constructed (``collect_bindings``);
pass ``list[tuple[key, description, group]]`` to show exactly those. Esc, q or F1 closes it.

A binding's group is its ``Binding.group`` description, else the ``HELP_GROUP`` class attribute of
the widget/screen that defines it, else its class name ("Global" for the app).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import Label, Static

from freeact_tui.tui.commands import COMMANDS, CommandSpec
from freeact_tui.tui.widgets.columns import Columns

BindingRow = tuple[str, str, str]


def _group_of(node: DOMNode, binding: Binding) -> str:
    if binding.group is not None and binding.group.description:
        return binding.group.description
    explicit = getattr(node, "HELP_GROUP", None)
    if isinstance(explicit, str) and explicit:
        return explicit
    if isinstance(node, App):
        return "Global"
    # "ConversationLog" -> "Conversation log"
    words = re.findall(r"[A-Z][a-z0-9]*|[a-z0-9]+", type(node).__name__)
    return " ".join([words[0], *(w.lower() for w in words[1:])]) if words else "Other"


def _textual_editing_key(node: DOMNode, binding: Binding) -> bool:
    """True for a hidden binding that Textual's own widget class declares (cut/copy/cursor keys …)."""
    if binding.show or isinstance(node, App | Screen):
        return False
    for cls in type(node).__mro__:
        for declared in cls.__dict__.get("BINDINGS", ()):
            key, action = (declared.key, declared.action) if isinstance(declared, Binding) else declared[:2]
            if action == binding.action and binding.key in [k.strip() for k in key.split(",")]:
                return cls.__module__.startswith("textual.")
    return False


def collect_bindings(screen: Screen[object]) -> list[BindingRow]:
    """The bindings a user can press on ``screen`` now: focused widget, its ancestors, screen, app.

    Args:
        screen: The screen whose active bindings to list.

    Returns:
        ``(key, description, group)`` rows. Left out: bindings without a description, and the
        hidden editing keys of Textual's own widgets (they work as in any text field).
    """
    rows: list[BindingRow] = []
    seen: set[tuple[str, str]] = set()
    app = screen.app
    for active in screen.active_bindings.values():
        binding = active.binding
        if not binding.description or _textual_editing_key(active.node, binding):
            continue
        key = app.get_key_display(binding)
        if (key, binding.description) in seen:
            continue
        seen.add((key, binding.description))
        rows.append((key, binding.description, _group_of(active.node, binding)))
    return rows


class HelpScreen(ModalScreen[None]):
    """Key bindings and slash commands, in one scrollable dialog."""

    CSS_PATH = "help.tcss"
    BINDINGS = [
        Binding("escape", "close", "Close", id="help.close"),
        Binding("q", "close", "Close", show=False),
        Binding("f1", "close", "Close", show=False),
        Binding("question_mark", "close", "Close", show=False),
    ]

    def __init__(
        self, bindings: Sequence[BindingRow] | None = None, commands: Sequence[CommandSpec] = COMMANDS
    ) -> None:
        """Build the help screen.

        Args:
            bindings: ``(key, description, group)`` rows; ``None`` reads the active screen's bindings.
            commands: The slash commands to list.
        """
        super().__init__()
        if bindings is None:
            bindings = collect_bindings(self.app.screen)
        self._rows = list(bindings)
        self._commands = list(commands)

    def compose(self) -> ComposeResult:
        groups: dict[str, list[tuple[str, str]]] = {}
        for key, description, group in self._rows:
            groups.setdefault(group, []).append((key, description))
        commands = [(spec.usage, spec.description) for spec in self._commands]
        # One key column width for all tables, so descriptions line up down the whole screen.
        width = max((len(key) for key, _, _ in self._rows), default=0)
        width = max([width, *(len(usage) for usage, _ in commands)])
        with Vertical(id="help-dialog"):
            yield Label("Help", id="help-title")
            with VerticalScroll(id="help-body"):
                yield Label("Keys", classes="help-section")
                if not groups:
                    yield Static("No key bindings.", classes="help-empty")
                for group, rows in groups.items():
                    yield Label(group, classes="help-group")
                    yield Columns(rows, width, "bold $accent", classes="help-table")
                yield Label("Slash commands (type in the prompt)", classes="help-section")
                yield Columns(commands, width, "bold $accent", classes="help-table")
                yield Static(
                    "Type / at the start of the prompt for a menu of these and the skills; Tab completes "
                    "a command, a path after @ and a session id after /resume. /model, /theme, /resume "
                    "and /sessions without an argument open a picker. Start a prompt with // to send "
                    "text beginning with a slash. Ctrl+P opens the command palette with the same commands.",
                    classes="help-note",
                    markup=False,
                )
            yield Static("Esc, q or F1 closes", id="help-hint", markup=False)

    def action_close(self) -> None:
        """Close the help screen."""
        self.dismiss(None)
