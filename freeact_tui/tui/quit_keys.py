"""What Ctrl+C and Ctrl+D do, as the best agent terminals do it, decided as data.

Ctrl+C cancels a running turn, else copies a selection (the focused widget's own binding), else clears
a typed draft (Up brings it back), else asks once and quits on a second press within ``QUIT_WINDOW``.
Ctrl+D quits on an empty prompt (as a shell does at its end of input) and deletes forward otherwise.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar

from textual.actions import SkipAction
from textual.widgets import TextArea

from freeact_tui.tui.screens.main import MainScreen

if TYPE_CHECKING:
    from textual.app import App

    from freeact_tui.tui.widgets.prompt import PromptInput

QUIT_WINDOW = 2.0
"""Seconds within which a second Ctrl+C on an idle prompt quits."""


class CtrlC(Enum):
    """What one Ctrl+C press does."""

    CANCEL = "cancel"
    """A turn runs: cancel it (and any dialog it opened)."""
    PASS = "pass"
    """Text is selected: the focused widget copies it."""
    CLEAR = "clear"
    """A draft is typed: clear it (kept in the prompt history)."""
    ARM = "arm"
    """Idle and empty: say that a second press quits."""
    QUIT = "quit"
    """The second press on an idle, empty prompt: quit."""


@dataclass(frozen=True)
class CtrlCState:
    """What Ctrl+C depends on.

    Args:
        turn_running: A turn (or a ``!command`` or ``/compact``) runs.
        selection: The focused widget or the screen has selected text.
        draft: The prompt's text (empty when the prompt is not on screen).
        since_armed: Seconds since the last press that armed the quit (None: not armed).
    """

    turn_running: bool
    selection: bool
    draft: str
    since_armed: float | None


def ctrl_c(state: CtrlCState, window: float = QUIT_WINDOW) -> CtrlC:
    """The one decision for Ctrl+C."""
    if state.turn_running:
        return CtrlC.CANCEL
    if state.selection:
        return CtrlC.PASS
    if state.draft:
        return CtrlC.CLEAR
    if state.since_armed is not None and 0 <= state.since_armed <= window:
        return CtrlC.QUIT
    return CtrlC.ARM


def ctrl_d_quits(*, prompt_focused: bool, draft: str) -> bool:
    """Ctrl+D quits only on the focused, empty prompt; elsewhere it keeps its meaning (delete forward)."""
    return prompt_focused and not draft


class QuitKeys:
    """Ctrl+C, Ctrl+D and Ctrl+Q of one app: the decisions above, carried out.

    Args:
        app: The app (its screens, its notifications, its quit); its chat screen says what runs.
    """

    CONFIRM_SECONDS: ClassVar[float] = 5.0
    """While something runs, a second Ctrl+Q within this many seconds quits."""

    def __init__(self, app: App[Any]) -> None:
        self._app = app
        self._armed_at: float | None = None  # when an idle Ctrl+C last said a second one quits
        self._quit_asked_at: float | None = None  # when Ctrl+Q last asked to confirm

    def _chat(self) -> MainScreen | None:
        return next((s for s in self._app.screen_stack if isinstance(s, MainScreen)), None)

    def _running_something(self) -> bool:
        """A turn, an action, a subagent or a ``!command`` runs."""
        screen = self._chat()
        return screen is not None and (screen.turn_running or (screen.agent is not None and screen.agent.busy))

    def _prompt_on_top(self) -> PromptInput | None:
        """The chat's prompt when the chat is the screen shown (a dialog above it owns the keys)."""
        screen = self._chat()
        return screen.prompt if screen is not None and self._app.screen is screen else None

    def _selection(self) -> bool:
        focused = self._app.focused
        if isinstance(focused, TextArea) and focused.selected_text:
            return True
        return bool(self._app.screen.get_selected_text())

    async def ctrl_c(self, *, passed: bool = False) -> None:
        """One press of Ctrl+C (raises ``SkipAction`` to let the focused widget copy a selection).

        Args:
            passed: The press was passed on for a selection that no widget copied: not again.
        """
        screen = self._chat()
        prompt = self._prompt_on_top()
        now = time.monotonic()
        armed = None if self._armed_at is None else now - self._armed_at
        state = CtrlCState(
            turn_running=screen is not None and screen.turn_running,
            selection=not passed and self._selection(),
            draft=prompt.text if prompt is not None and not prompt.read_only else "",
            since_armed=armed,
        )
        decision = ctrl_c(state)
        self._armed_at = now if decision is CtrlC.ARM else None
        match decision:
            case CtrlC.CANCEL:
                assert screen is not None
                screen.action_cancel_turn()
            case CtrlC.PASS:
                raise SkipAction()
            case CtrlC.CLEAR:
                assert prompt is not None
                prompt.remember(prompt.message)
                prompt.clear_input()
            case CtrlC.ARM:
                self._app.notify("Press Ctrl+C again to quit.", timeout=QUIT_WINDOW)
            case CtrlC.QUIT:
                await self.request_quit()

    async def ctrl_d(self) -> None:
        """Ctrl+D: quit on the empty prompt; elsewhere the focused widget's Ctrl+D (delete forward)."""
        prompt = self._prompt_on_top()
        focused = prompt is not None and self._app.focused is prompt
        if not ctrl_d_quits(prompt_focused=focused, draft=prompt.text if prompt is not None else "x"):
            raise SkipAction()
        await self.request_quit()

    async def request_quit(self) -> None:
        """Quit; while a turn, an action, a subagent or a ``!command`` runs, only a second request quits."""
        now = time.monotonic()
        asked, self._quit_asked_at = self._quit_asked_at, None
        if self._running_something() and (asked is None or now - asked > self.CONFIRM_SECONDS):
            self._quit_asked_at = now
            self._app.notify(
                "Something is running. Press Ctrl+Q again to quit.",
                title="Quit?",
                severity="warning",
                timeout=self.CONFIRM_SECONDS,
            )
            return
        await self._app.action_quit()
