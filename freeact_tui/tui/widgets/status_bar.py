"""The status bar: model, session, execution mode, action protocol, kernel state, usage, waiting approvals, activity."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult, RenderResult
from textual.containers import Horizontal
from textual.content import Content
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Label

from freeact_tui.text.safe import visible
from freeact_tui.tui.widgets.context_gauge import ContextGauge
from freeact_tui.tui.widgets.status_fit import PRIORITY, dropped

if TYPE_CHECKING:  # annotations only: the events load with the agent, after the first frame
    from freeact_tui.events import ContextUpdate, KernelState, UsageUpdate

_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPINNER_WIDTH = 2


class Spinner(Widget):
    """A fixed-width activity indicator; a frame change repaints one cell and never triggers layout."""

    DEFAULT_CSS = f"""
    Spinner {{ width: {SPINNER_WIDTH}; height: 1; color: $text-accent; }}
    """

    frame: reactive[int] = reactive(0, layout=False)
    active: reactive[bool] = reactive(False, layout=False)

    def on_mount(self) -> None:
        self._timer = self.set_interval(1 / 10, self._advance, pause=True)

    def watch_active(self, active: bool) -> None:
        if not hasattr(self, "_timer"):
            return
        if active and self.app.animation_level != "none":
            self._timer.resume()
        else:
            self._timer.pause()

    def _advance(self) -> None:
        self.frame = (self.frame + 1) % len(_FRAMES)

    def render(self) -> RenderResult:
        return _FRAMES[self.frame] if self.active else " "


def _whole_width(label: Label) -> int:
    """The cells ``label`` takes when shown whole: its text and its padding."""
    return label.get_content_width(Size(0, 0), Size(0, 0)) + label.styles.gutter.width


def _tokens(count: int) -> str:
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)


READINGS_LOST = "⚠ readings untrusted: reset the kernel"
"""The status bar's word that effect rules and the in-folder mode ask in this kernel (its tooltip: why)."""


class StatusBar(Horizontal):
    """One line of session facts; clicking the session id copies it. When the line is too narrow, whole
    labels are left out by their priority (``status_fit.PRIORITY``), never cut."""

    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        background: $panel;
        color: $text-muted;
        & > Label { padding: 0 1; }
        & > #status-activity { color: $text-accent; }
        & > #status-session { color: $text; }
        & > #status-session:hover { text-style: underline; }
        & > #status-approvals { color: $text-warning; text-style: bold; }
        & > #status-approval-mode { color: $text-accent; text-style: bold; }
        & > #status-readings { color: $text-warning; text-style: bold; }
        & > #status-skip { background: $error; color: $text; text-style: bold; }
        & > .-hidden { display: none; }
        & > .-dropped { display: none; }
        & > #status-kernel.-failed { color: $text-error; }
    }
    """

    class SessionClicked(Message):
        """The user clicked the session id (the app copies it)."""

    def compose(self) -> ComposeResult:
        yield Spinner(id="status-spinner")
        yield Label("", id="status-activity", classes="-hidden")
        yield Label("", id="status-approvals", classes="-hidden")
        yield Label("", id="status-approval-mode", classes="-hidden")
        yield Label(READINGS_LOST, id="status-readings", classes="-hidden")
        yield Label("", id="status-model")
        yield Label("", id="status-session")
        yield Label("", id="status-mode")
        yield Label("kernel: starting", id="status-kernel")
        yield Label("", id="status-usage")
        yield ContextGauge(id="status-context")
        yield Label("SKIP PERMISSIONS", id="status-skip", classes="-hidden")
        yield Label("", id="status-protocol", classes="-hidden")

    def _label(self, name: str) -> Label:
        return self.query_one(f"#status-{name}", Label)

    def _fit(self) -> None:
        """Leave out the lowest-priority labels that do not fit the bar's width (and show them again when
        they do): every label changes through a setter of this class, each of which ends here."""
        if not self.size.width:  # not laid out yet: the resize that follows fits it
            return
        labels = {name: self._label(name) for name in PRIORITY}
        widths = [
            (name, _whole_width(label)) for name, label in labels.items() if not label.has_class("-hidden")
        ]
        out = dropped(widths, self.size.width - SPINNER_WIDTH)
        for name, label in labels.items():
            if label.has_class("-dropped") != (name in out):  # a class change costs a layout pass
                label.set_class(name in out, "-dropped")

    def on_resize(self) -> None:
        self._fit()

    def set_session(self, *, model: str, session_id: str, mode: str, skip_permissions: bool) -> None:
        """Show the facts of the current agent."""
        self._label("model").update(
            Content(visible(model, multiline=False))
        )  # from config: shown, never markup
        self._label("session").update(f"session {session_id[:8]}")
        self._label("session").tooltip = f"{session_id} (click or F2 to copy)"
        self._label("mode").update(mode)
        self._label("skip").set_class(not skip_permissions, "-hidden")
        self._fit()

    def set_approval_mode(self, mode: str) -> None:
        """Show the approval mode (``freeact_tui.effects.modes``); hidden for ``ask``, the default."""
        from freeact_tui.tui.approval_modes import mode_label

        label = self._label("approval-mode")
        label.update(mode_label(mode))
        label.set_class(not label.content, "-hidden")
        self._fit()

    def set_readings(self, lost: str | None) -> None:
        """Point out that readings of code no longer vouch for it (``Agent.readings_lost``: why); hidden else."""
        label = self._label("readings")
        if label.tooltip == lost:
            return  # called for every event of a turn (each streamed delta): nothing changed, no work
        label.tooltip = lost
        label.set_class(lost is None, "-hidden")
        self._fit()

    def set_protocol(self, protocol: str | None) -> None:
        """Show how the model acts (``tools``, ``text`` or ``auto``); ``None``: no agent."""
        label = self._label("protocol")
        label.update(f"protocol: {protocol}" if protocol else "")
        label.set_class(not protocol, "-hidden")
        self._fit()

    def set_kernel(self, state: KernelState) -> None:
        """Show the kernel state (starting, ready, busy, restarting, failed, stopped)."""
        label = self._label("kernel")
        label.update(f"kernel: {state}")
        label.set_class(state == "failed", "-failed")
        self._fit()

    def set_usage(self, usage: UsageUpdate) -> None:
        """Show tokens and cost so far."""
        text = f"↑{_tokens(usage.input_tokens)} ↓{_tokens(usage.output_tokens)} tokens"
        if usage.estimated:  # the server reported no usage for some requests: counted by characters
            text = "~" + text
        if usage.cost_usd is not None:
            text += f"  ${usage.cost_usd:.4f}"
        self._label("usage").update(text)
        self._fit()

    def set_context(self, usage: ContextUpdate) -> None:
        """Show how full the model's context window is."""
        self.query_one(ContextGauge).show(usage)
        self._fit()

    def set_waiting(self, count: int) -> None:
        """Show how many approvals wait for the user."""
        label = self._label("approvals")
        text = f"{count} approval{'s' if count != 1 else ''} waiting" if count else ""
        # Repainting a hidden label forces a full layout pass: only touch it when it changes.
        if label.content != text:
            label.update(text)
        label.set_class(count == 0, "-hidden")
        self._fit()

    @property
    def activity(self) -> str:
        """What ``set_activity`` last showed."""
        return str(self._label("activity").content)

    def set_activity(self, activity: str) -> None:
        """``thinking``, ``running``, ``waiting`` (for approvals), ``waiting for the kernel`` or "" when idle;
        drives the spinner."""
        self.query_one(Spinner).active = bool(activity)
        label = self._label("activity")
        if label.content != activity:
            label.update(activity)
        label.set_class(not activity, "-hidden")
        self._fit()

    def on_click(self, event: Click) -> None:
        if event.widget is not None and event.widget.id == "status-session":
            self.post_message(self.SessionClicked())
