"""The approval dialog: shows an action in full and returns the user's ``Decision``."""

from __future__ import annotations

import time
from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from freeact_tui.effects import class_of
from freeact_tui.events import ApprovalRequest, Decision, RememberScope
from freeact_tui.permissions.cells import cell_pattern
from freeact_tui.permissions.patterns import broad_reason, pattern_note, proposed_pattern
from freeact_tui.permissions.rules import folder_relative, rule_problem
from freeact_tui.reach.named_paths import describe
from freeact_tui.text.codeshow import shown
from freeact_tui.text.safe import visible
from freeact_tui.toolcalls import CodeAction, ShellAction, ShellScript, ToolCall, installs_packages
from freeact_tui.tui.widgets.blocks.action import action_title, tool_call_content
from freeact_tui.tui.widgets.code_view import CodeView

_GROUP = Binding.Group("Decide")
_SCOPE_TEXT: dict[str, str] = {
    "always": "Always allow (saved) actions matching:",
    "session": "Allow for this session actions matching:",
    "deny": "Always deny (saved) actions matching:",
    "cell": "Allow for this session this cell only:",
}


class ApprovalScreen(ModalScreen[Decision]):
    """Ask the user to approve one action.

    Args:
        request: The pending request; the dialog only reads it (the caller resolves it).
        position: Which of the waiting requests this is (1-based).
        total: How many requests wait in all (this one included).
    """

    CSS_PATH = "approval.tcss"
    AUTO_FOCUS = None
    ARMING_SECONDS: ClassVar[float] = 0.45
    """Keys are ignored this long after the dialog is shown, so that typing ahead never decides."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "approve", "Approve", id="approval.approve", group=_GROUP, key_display="y"),
        Binding("n", "reject", "Reject…", id="approval.reject", group=_GROUP),
        Binding("a", "remember('always')", "Always allow", id="approval.always", group=_GROUP),
        Binding("s", "remember('session')", "Allow for session", id="approval.session", group=_GROUP),
        Binding("d", "remember('deny')", "Always deny", id="approval.deny", group=_GROUP),
        Binding("c", "remember('cell')", "This cell only", id="approval.cell", group=_GROUP, show=False),
        Binding("escape", "escape", "Reject", id="approval.escape", show=False),
        # The code scrolls from the keyboard too: nothing of it is out of reach before deciding.
        Binding("down", "scroll_code('down')", "Scroll down", show=False),
        Binding("up", "scroll_code('up')", "Scroll up", show=False),
        Binding("pagedown", "scroll_code('page_down')", "Page down", show=False),
        Binding("pageup", "scroll_code('page_up')", "Page up", show=False),
    ]

    def __init__(self, request: ApprovalRequest, *, position: int = 1, total: int = 1) -> None:
        super().__init__()
        self.request = request
        self.position = position
        self.total = total
        self.scope: RememberScope | None = None
        self.deny = False  # the rule being edited refuses such actions instead of allowing them
        self.armed = self.ARMING_SECONDS <= 0
        self._broad_confirm: tuple[str, float] | None = None  # (pattern, when) after the first Enter
        self.rejecting = False  # after `n`: the user may say what to do instead

    def compose(self) -> ComposeResult:
        call = self.request.tool_call
        with Vertical(id="approval-dialog") as dialog:
            dialog.border_title = self._title()
            dialog.border_subtitle = self._count_text()
            yield Label(
                Content(visible(f"Agent {self.request.agent_id} asks to run:", multiline=False)),
                id="approval-who",
            )
            # All of the code: blank runs folded with their count, a line says what is out of sight.
            yield CodeView(tool_call_content(call), scroll_id="approval-action", body_id="approval-body")
            # Docked: the code above scrolls, whatever its length, so that these always show.
            with Vertical(id="approval-footer"):
                yield from self._compose_footer()

    def _compose_footer(self) -> ComposeResult:
        call = self.request.tool_call
        if isinstance(call, ShellAction) and call.full_command and call.full_command != call.command:
            yield Label(Content(f"part of: {shown(call.full_command)}"), id="approval-context")
        if installing := _install_lines(call):
            # One line each, controls shown: a hidden character must not disguise what gets installed.
            lines = "\n".join(f"  {visible(line.strip(), multiline=False)}" for line in installing)
            yield Label(
                Content(f"⚠ Installs packages into the kernel environment:\n{lines}"), id="approval-installs"
            )
        if self.request.effects:
            # What the code does, in the words rules use (``freeact_tui.effects.describe``).
            yield Label(
                Content(visible(f"It {self.request.effects}", multiline=False)), id="approval-effects"
            )
        if warning := describe(self.request.named_paths):
            # Paths come from the model: controls shown, one line each, so none can hide another.
            text = "\n".join(visible(line, multiline=False) for line in warning)
            yield Label(Content(text), id="approval-paths")
        with Vertical(id="approval-remember"):
            yield Label("", id="approval-scope")
            # A pattern shown with its controls visible no longer matches the hidden command: safe to save.
            yield Input(
                self._proposal("session"),
                id="approval-pattern",
                select_on_focus=False,
            )
            yield Label("", id="approval-breadth")
            yield Label(
                "Enter saves the rule and approves · Esc goes back",
                id="approval-save",
                classes="approval-hint",
            )
        with Vertical(id="approval-reject"):
            yield Label("Rejected. What should the agent do instead? (optional)", id="approval-reject-title")
            yield Input(
                placeholder="e.g. use pathlib and do not touch tests/",
                id="approval-instruction",
                max_length=500,
            )
            yield Label(
                "Enter rejects (your words go to the agent, which goes on) · Esc goes back",
                classes="approval-hint",
            )
        yield Label("", id="approval-keys", classes="approval-hint")

    def _proposal(self, scope: str) -> str:
        """The pattern a remembered decision starts from: the code's effect class, or the exact cell."""
        call = self.request.tool_call
        if scope in ("cell", "deny") and isinstance(call, CodeAction | ShellScript):
            return cell_pattern(call.subject)
        # A pattern shown with its controls visible no longer matches the hidden command: safe to save.
        pattern = proposed_pattern(call, self.request.effect_class, deny=scope == "deny")
        return visible(pattern, multiline=False)

    def _title(self) -> str:
        from textual.markup import escape

        return escape(
            visible(
                f"Approve? [{self.request.agent_id}] {action_title(self.request.tool_call)}", multiline=False
            )
        )

    def _count_text(self) -> str:
        return f"{self.position} of {self.total}" if self.total > 1 else ""

    def set_count(self, position: int, total: int) -> None:
        """Update "n of m" when more requests queue up while the dialog is open."""
        self.position, self.total = position, total
        dialogs = self.query("#approval-dialog")
        if dialogs:
            dialogs.first().border_subtitle = self._count_text()

    def on_mount(self) -> None:
        self._show_keys()
        self.call_after_refresh(self._fit)
        self.set_count(self.position, self.total)
        if not self.armed:
            self.add_class("-unarmed")
            # Counted from the first paint: keys typed before the user could see the dialog do nothing.
            self.call_after_refresh(self.set_timer, self.ARMING_SECONDS, self._arm)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """Give the action what the screen has left, so it scrolls instead of being cut (CSS cannot say so)."""
        dialog = self.query_one("#approval-dialog")
        parts = [self.query_one(f"#approval-{part}") for part in ("who", "footer")]
        used = sum(part.outer_size.height + part.styles.margin.height for part in parts)
        frame = dialog.styles.gutter.height + dialog.styles.margin.height
        self.query_one(CodeView).fit(max(3, self.size.height - frame - used))

    def _typing_changed(self) -> None:
        self.set_class(self.typing, "-typing")  # the decision keys do nothing while the user types
        self.call_after_refresh(self._fit)
        self.refresh_bindings()

    def _arm(self) -> None:
        self.armed = True
        self.remove_class("-unarmed")
        self._show_keys()
        self.refresh_bindings()

    def _show_keys(self) -> None:
        """Say which keys decide, read from the bindings in effect (a keymap included): never a fixed
        text that a rebinding would turn into a lie."""
        keys: dict[str, list[str]] = {}
        for key, active in self.active_bindings.items():
            if active.node is self and active.binding.id in _KEY_WORDS:
                keys.setdefault(active.binding.id, []).append(key)
        self.query_one("#approval-keys", Label).update(_keys_text(keys, self.armed))

    @property
    def editing_pattern(self) -> bool:
        return self.scope is not None

    @property
    def typing(self) -> bool:
        """A pattern or an instruction is being typed: letters go to the input, not to the keys."""
        return self.editing_pattern or self.rejecting

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not self.armed:
            return None  # shown dimmed; the key is swallowed (the dialog is modal)
        # While the pattern is edited, letters type into the input instead of deciding.
        if action in ("approve", "reject", "remember"):
            return not self.typing
        return True

    def action_scroll_code(self, how: Literal["down", "up", "page_down", "page_up"]) -> None:
        scroll = self.query_one(CodeView).scroll
        getattr(scroll, f"scroll_{how}")(animate=False)

    def action_approve(self) -> None:
        self.dismiss(Decision(True))

    def action_reject(self) -> None:
        """Open the line for an instruction; Enter (with or without words) rejects."""
        self.rejecting = True
        self.query_one("#approval-reject").add_class("-open")
        self.query_one("#approval-instruction", Input).focus()
        self._typing_changed()

    def action_escape(self) -> None:
        if self.rejecting:
            self.rejecting = False
            self.query_one("#approval-reject").remove_class("-open")
            self._typing_changed()
        elif self.editing_pattern:
            self.scope = None
            self.deny = False
            self._broad_confirm = None
            self.query_one("#approval-remember").remove_class("-open")
            self._typing_changed()
        else:
            self.dismiss(Decision(False))

    def action_remember(self, scope: RememberScope | Literal["deny", "cell"]) -> None:
        self.deny = scope == "deny"
        self.scope = "always" if scope == "deny" else "session" if scope == "cell" else scope
        self.query_one("#approval-scope", Label).update(_SCOPE_TEXT[scope])
        self._broad_confirm = None
        self.query_one("#approval-remember").add_class("-open")
        pattern = self.query_one("#approval-pattern", Input)
        # Filled afresh each time: what was typed and left with Esc is gone, never one Enter away.
        pattern.value = self._proposal(scope)
        self._show_breadth(pattern.value.strip())
        pattern.focus()
        pattern.cursor_position = len(pattern.value)
        self._typing_changed()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if event.input.id != "approval-pattern":
            return
        self._broad_confirm = None
        self._show_breadth(event.value.strip())

    def _show_breadth(self, pattern: str) -> None:
        label = self.query_one("#approval-breadth", Label)
        kind = self.request.tool_call.kind
        problem = self._problem(pattern)
        reason = broad_reason(kind, pattern) if pattern and problem is None else None
        broad = reason is not None and not self.deny  # a broad deny rule refuses more: no warning
        if problem is not None:
            text = f"✗ Not a rule: {problem}."
        elif broad:
            text = f"⚠ Broad rule: {reason}."
        else:
            text = (pattern_note(kind, pattern) or "") if pattern and not self.deny else ""
            if text and class_of(pattern) is not None:
                text += " (Esc, then c: this cell only)"  # c types into the pattern here
            if self.scope == "always" and not self.deny and pattern and folder_relative(kind, pattern):
                text = (text + " " if text else "") + "Saved for this folder only (it means other files elsewhere)."
        label.set_class(broad or problem is not None, "-broad")
        label.update(Content(text))
        label.display = bool(text)
        self._update_save_hint()

    def _problem(self, pattern: str) -> str | None:
        """Why the rule store would refuse ``pattern`` (``rule_problem``); ``None`` when it holds."""
        if not pattern:
            return None
        return rule_problem(self.request.tool_call.kind, pattern, "deny" if self.deny else "allow")

    def _update_save_hint(self) -> None:
        verb = "rejects" if self.deny else "approves"
        if self._broad_confirm is not None:
            text = "This rule is broad: press Enter again to save it anyway and approve · Esc goes back"
        else:
            text = f"Enter saves the rule and {verb} · Esc goes back"
        self.query_one("#approval-save", Label).update(text)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not self.armed or not self.typing:
            return  # type-ahead into a field not opened yet decides nothing
        if event.input.id == "approval-instruction":
            self.dismiss(Decision(False, instruction=event.value.strip() or None))
            return
        pattern = event.value.strip()
        if self.scope is None or not pattern:
            self.notify("Enter a pattern, or press Esc to go back.", severity="warning")
            return
        problem = self._problem(pattern)
        if problem is not None:  # the store would refuse it: nothing is decided on a rule that cannot be
            self.notify(f"Not a rule: {problem}. Change the pattern, or press Esc.", severity="warning")
            return
        needs_second = (
            self.scope == "always"
            and not self.deny
            and broad_reason(self.request.tool_call.kind, pattern) is not None
        )
        if needs_second:
            now = time.monotonic()
            first = self._broad_confirm
            # A second Enter typed right after the first does not count: it must follow the warning.
            if first is None or first[0] != pattern or now - first[1] < self.ARMING_SECONDS:
                if first is None or first[0] != pattern:
                    self._broad_confirm = (pattern, now)
                self._update_save_hint()
                self.notify(
                    "This always-rule is broad. Press Enter again to save it, or narrow the pattern.",
                    severity="warning",
                )
                return
        self.dismiss(Decision(not self.deny, remember=self.scope, pattern=pattern))


def _install_lines(call: ToolCall) -> list[str]:
    """The lines of a shell action or script that install Python packages (none for other actions)."""
    if isinstance(call, ShellAction):
        return [call.command] if call.installs_packages else []
    if isinstance(call, ShellScript):
        return [line for line in call.script.splitlines() if installs_packages(line)]
    return []


# What each deciding binding does, in the order the hint names them (keys come from the bindings).
_KEY_WORDS: dict[str, str] = {
    "approval.approve": "approve",
    "approval.reject": "reject, say why",
    "approval.escape": "reject",
    "approval.always": "always allow",
    "approval.session": "allow for this session",
    "approval.deny": "always deny",
}
_KEY_NAMES = {"enter": "Enter", "escape": "Esc", "space": "Space", "tab": "Tab"}


def _key_name(key: str) -> str:
    return _KEY_NAMES.get(key, visible(key, multiline=False))


def _keys_text(keys: dict[str, list[str]], armed: bool) -> str:
    """The hint: each decision with the keys bound to it now (``keys``: binding id to its keys)."""
    parts = [
        f"{'/'.join(_key_name(k) for k in keys[binding_id])} {words}"
        for binding_id, words in _KEY_WORDS.items()
        if keys.get(binding_id)
    ]
    text = " · ".join(parts)
    return text if armed else f"{text} …"
