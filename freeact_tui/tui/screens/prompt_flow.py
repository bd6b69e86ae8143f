"""Where a typed message goes: a slash command, the queue (a turn runs or the agent is still
opening), the running turn (Alt+S), the user's own ``!command``, or a new turn; and what the queue
sends when a turn ends."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from textual.notifications import SeverityLevel

from freeact_tui.tui.mentions import attach_mentions
from freeact_tui.tui.screens.chat_host import ChatHost
from freeact_tui.tui.screens.user_shell import shell_command
from freeact_tui.tui.widgets.conversation import ConversationLog
from freeact_tui.tui.widgets.prompt import PromptInput
from freeact_tui.tui.widgets.queued import QueuedMessages

if TYPE_CHECKING:
    from collections.abc import Coroutine
    from typing import Any

    from freeact_tui.agent.agent import Agent
    from freeact_tui.tui.widgets.blocks import UserMessageBlock


class FlowView(Protocol):
    """What the flow needs of the chat screen (``MainScreen``)."""

    host: ChatHost
    turn_running: bool
    read_only: bool
    work_dir: Path

    @property
    def prompt(self) -> PromptInput: ...
    @property
    def conversation(self) -> ConversationLog: ...
    @property
    def agent(self) -> Agent | None: ...
    @property
    def queue(self) -> QueuedMessages: ...

    def notify(
        self, message: str, *, title: str = "", severity: SeverityLevel = "information", timeout: float | None = None
    ) -> None: ...
    def start_user_shell(self, command: str) -> None: ...
    def start_turn(self, prompt: str, shown: str | None = None) -> None: ...
    def run_worker(
        self, work: Coroutine[Any, Any, object], *, group: str, exit_on_error: bool
    ) -> object: ...


class PromptFlow:
    """Sends what the user types, in order, without losing any of it."""

    def __init__(self, view: FlowView) -> None:
        self.view = view
        self.hold_queue = False  # after the user cancelled a turn: queued messages wait to be sent or edited
        self._steered: dict[str, tuple[str, UserMessageBlock]] = {}
        """Messages sent into the running turn (as the model gets them): as typed, and their block."""

    async def submit(self, text: str) -> None:
        """Enter in the prompt."""
        view, prompt = self.view, self.view.prompt
        if not text.strip():
            return
        outcome = await view.host.handle_slash(text)
        if outcome == "invalid":
            return
        if outcome == "done":
            prompt.remember(text)
            prompt.clear_input()
            return
        if view.turn_running:  # sent when the turn ends
            self._queue(text, "Queued: sent when the turn ends (Alt+S sends a message into the running turn).")
            return
        if view.read_only:
            view.notify("This session is read-only: Ctrl+N or /new starts a new one.", severity="warning")
            return
        if not view.host.agent_ready:  # sent the moment the agent is open (``send_next``)
            self._queue(text, "Queued: sent as soon as the agent is open.")
            return
        if view.agent is None:
            problem = view.host.startup_error or "No model is set."
            from freeact_tui.tui.screens.first_run import setup_guide  # its screen's Markdown: not at start
            from freeact_tui.tui.widgets.blocks.guide import GuideBlock

            await view.conversation.add(GuideBlock(setup_guide(problem), title="Set up a model first"))
            view.notify("No model is set: type /model PROVIDER:NAME (see the guide).", severity="error")
            return
        prompt.remember(text)
        prompt.clear_input()
        self._start(text)

    async def first(self, text: str | None, *, send: bool) -> None:
        """The command line's first message (``freeact-tui "PROMPT"``): sent as if typed (a slash
        command runs), or (``send=False``: no model yet) left in the prompt to send once there is one."""
        if not text:
            return
        if send and self.view.agent is not None:
            await self.submit(text)
            return
        prompt = self.view.prompt
        prompt.load_text(text)
        prompt.move_cursor(prompt.document.end)

    def _queue(self, text: str, notice: str) -> None:
        self.view.prompt.remember(text)
        self.view.prompt.clear_input()
        self.view.queue.push(text)
        self.view.notify(notice)

    def _start(self, text: str) -> None:
        """The user's ``!command``, else a turn for the prompt (with the files its ``@path``s name)."""
        command = shell_command(text)
        if command is not None:
            self.view.start_user_shell(command)
            return
        prompt = self.view.host.prompt_text(text)
        self.view.start_turn(self.with_files(prompt), shown=prompt)

    def with_files(self, prompt: str) -> str:
        """The prompt with the files its ``@path`` tokens name attached (within the size limits)."""
        try:
            return attach_mentions(prompt, self.view.work_dir)
        except OSError as exc:  # an unreadable working dir: send the prompt as typed
            self.view.notify(f"Mentioned files not attached: {exc}", severity="warning")
            return prompt

    async def steer(self) -> None:
        """Alt+S: the typed message into the running turn (the model gets it at its next step)."""
        view, prompt = self.view, self.view.prompt
        text = prompt.message
        if not text.strip():
            return
        agent = view.agent
        if not view.turn_running or agent is None or not agent.busy:
            await self.submit(text)
            return
        sent = self.with_files(view.host.prompt_text(text))
        agent.steer(sent)
        prompt.remember(text)
        prompt.clear_input()

        async def show() -> None:
            self._steered[sent] = (text, await view.conversation.add_user(text))

        # Shown from a worker like the turn's own blocks: closing the open streams here, in the screen's
        # handler, would wait on the screen itself (a hang while an answer streams).
        view.run_worker(show(), group="steer", exit_on_error=False)
        view.notify("Sent into the running turn: the model gets it after the current step.")

    def _untaken(self, sent: str) -> str:
        """A message sent into a turn that ended without taking it: it moves to the next turn as the user
        typed it (its ``@file``s attached once, when that turn starts), and its block leaves the turn that
        never got it (shown once, where the model gets it)."""
        typed, block = self._steered.pop(sent, (sent, None))
        if block is not None and block.is_attached:
            block.remove()
        return typed

    def edit_queued(self, text: str) -> None:
        """A queued message back into the prompt; a draft there goes to the queue, never lost."""
        prompt = self.view.prompt
        draft = prompt.message.strip()
        if draft:
            self.view.queue.push(draft)
        prompt.load_text(text)
        prompt.move_cursor(prompt.document.end)
        prompt.focus()

    def send_next(self) -> None:
        """After a turn: a message the turn did not take, else the next queued one, starts a turn."""
        view = self.view
        queue = view.queue
        if view.agent is not None:
            for left in reversed(view.agent.take_steering()):
                queue.push(self._untaken(left), first=True)
        self._steered.clear()  # the ones the turn took stay where they were shown
        if view.turn_running or view.read_only or view.agent is None:
            return
        if self.hold_queue:
            self.hold_queue = False
            if queue.items:
                view.notify("The turn was cancelled: queued messages wait (Shift+Tab, Enter to edit and send one).")
            return
        text = queue.pop_next()
        if text is not None:
            self._start(text)
