"""The approval mode from the keyboard: Ctrl+T cycles it, the status bar shows it.

Claude Code cycles its modes with Shift+Tab; here Shift+Tab is taken (from the prompt to the queued
messages, from the log back to the prompt), so the cycle has a key of its own that no widget uses.

``ApprovalModeKeys`` is mixed into the main screen; the mode lives on the agent's rules
(``PermissionRules.mode``, shared with its subagents) and is decided by ``freeact_tui.effects.modes``.
"""

from __future__ import annotations

from typing import Any, ClassVar, cast

from textual.binding import Binding, BindingType
from textual.screen import Screen

from freeact_tui.effects.modes import MODE_DESCRIPTIONS, MODE_WORDS, ApprovalMode, next_mode


def mode_label(mode: str) -> str:
    """What the status bar shows for ``mode`` ("" for ``ask``, the default: nothing to point out)."""
    return "" if mode == ApprovalMode.ASK else f"⏵⏵ {ApprovalMode(mode).value} (^t)"


class ApprovalModeKeys(Screen[None]):
    """Ctrl+T cycles the approval mode of the shown agent (a screen's bindings are merged from its bases)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # Priority: whatever has the focus, the key switches the mode (no widget here uses it).
        Binding("ctrl+t", "cycle_approval_mode", "Approval mode", id="main.approval_mode", show=False, priority=True),
    ]

    def action_cycle_approval_mode(self) -> None:
        screen = cast(Any, self)  # the main screen: its app shows an agent, it has the status bar
        agent = screen.app.agent
        if agent is None:
            screen.notify("No agent yet: the approval mode applies once a model is set up.", severity="warning")
            return
        rules = agent.permissions
        rules.mode = next_mode(rules.mode, sandboxed=rules.sandboxed)
        screen.status_bar.set_approval_mode(rules.mode)
        screen.notify(MODE_DESCRIPTIONS[rules.mode], title=f"Approvals: {MODE_WORDS[rules.mode]}")


__all__ = ["ApprovalModeKeys", "mode_label"]
