"""The main screen: conversation log, prompt and status bar; runs turns and asks for approvals."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, ClassVar, Protocol

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Collapsible

from freeact_tui.events import (
    AgentError,
    AgentEvent,
    ApprovalRequest,
    Cancelled,
    CodeExecutionOutput,
    CodeExecutionOutputChunk,
    KernelStatus,
    ModelRetry,
    ProtocolSwitch,
    Response,
    ResponseChunk,
    SubagentStatus,
    Thoughts,
    ThoughtsChunk,
    ToolOutput,
    UsageUpdate,
)
from freeact_tui.store.sessions import SessionStore
from freeact_tui.tui.replay import blocks_from_history
from freeact_tui.tui.screens.approval_controller import ApprovalController
from freeact_tui.tui.screens.first_run import setup_guide
from freeact_tui.tui.widgets.blocks import ActionBlock
from freeact_tui.tui.widgets.conversation import ConversationLog
from freeact_tui.tui.widgets.key_footer import KeyFooter
from freeact_tui.tui.widgets.prompt import PromptInput
from freeact_tui.tui.widgets.side_panel import SidePanel
from freeact_tui.tui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from freeact_tui.agent.agent import Agent
    from freeact_tui.config import Config
    from freeact_tui.tui.widgets.session_list import Clock

_TURN = Binding.Group("Turn")


_CLEAR_WINDOW = 2.0
"""Seconds within which a second Esc clears the prompt's draft."""


class ChatHost(Protocol):
    """What the main screen needs of its app (``FreeactApp``), so that the screen never imports it."""

    @property
    def config(self) -> Config: ...
    @property
    def clock(self) -> Clock | None: ...
    @property
    def agent(self) -> Agent | None: ...
    @property
    def agent_ready(self) -> bool: ...
    @property
    def startup_error(self) -> str | None: ...

    async def handle_slash(self, text: str) -> str:
        """Run a slash command: ``"prompt"`` (not one), ``"done"`` or ``"invalid"``."""
        ...

    def prompt_text(self, text: str) -> str: ...
    def action_copy_session_id(self) -> None: ...


class MainScreen(Screen[None]):
    """The chat: one turn at a time, approvals queued in dialogs, status kept current."""

    CSS_PATH = "main.tcss"
    AUTO_FOCUS = "#prompt"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel_turn", "Cancel turn", id="main.cancel", group=_TURN),
        Binding("ctrl+n", "new_session", "New session", id="main.new_session"),
        Binding("ctrl+o", "toggle_details", "Expand/collapse", id="main.toggle_details"),
        Binding("ctrl+b", "toggle_side_panel", "Side panel", id="main.side_panel"),
        Binding("ctrl+l", "focus_log", "Scroll log", id="main.focus_log", show=False),
    ]

    def __init__(self, host: ChatHost) -> None:
        super().__init__()
        self.host = host
        self.turn_running = False
        self.read_only = False
        self._escaped_at = 0.0
        self.approvals: ApprovalController[ActionBlock] = ApprovalController(
            self,
            on_count=lambda count: self.status_bar.set_waiting(count),
            on_settled=self._approval_settled,
            on_asking=lambda: self.status_bar.set_activity("waiting"),
        )

    def compose(self) -> ComposeResult:
        yield SidePanel(clock=self.host.clock, id="side-panel")
        yield ConversationLog(id="conversation")
        yield PromptInput(id="prompt")
        yield StatusBar(id="status-bar")
        yield KeyFooter()

    @property
    def conversation(self) -> ConversationLog:
        return self.query_one(ConversationLog)

    @property
    def prompt(self) -> PromptInput:
        return self.query_one(PromptInput)

    @property
    def status_bar(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def agent(self) -> Agent | None:
        return self.host.agent

    # -- the agent ---------------------------------------------------------------------------------------

    async def show_agent(self) -> None:
        """Render the current agent: status, past turns of a resumed session, a damaged-session warning."""
        agent = self.agent
        self.read_only = False
        self.prompt.disabled = False
        self.prompt.placeholder = "Ask anything · Enter sends · Ctrl+J newline · /help"
        if agent is None:
            self.status_bar.set_session(model="no model", session_id="-", mode="-", skip_permissions=False)
            if self.host.startup_error:
                await self.conversation.error(self.host.startup_error, title="Cannot start the agent")
            return
        agent.subscribe(self._on_agent_status)
        self.query_one(SidePanel).clear_subagents()
        if self.query_one(SidePanel).display:
            self._refresh_sessions()
        self.status_bar.set_session(
            model=agent.model_name,
            session_id=agent.session_id,
            mode=agent.execution_mode,
            skip_permissions=agent.skip_permissions,
        )
        self.status_bar.set_kernel(agent.kernel_state)
        self.status_bar.set_usage(agent.usage)
        if agent.history:
            await self.conversation.add_all(blocks_from_history(agent.history))
        if agent.load_damage is not None:
            await self.conversation.error(
                f"{agent.load_damage}\n\nThe session is read-only so that nothing more is lost. "
                "Press Ctrl+N or type /new to continue in a new session (the damaged file stays as it is).",
                title="Session file damaged",
            )
            self.read_only = True
            self.prompt.placeholder = "Read-only session: Ctrl+N or /new starts a new one"
        self.refresh_bindings()

    class AgentStatus(Message):
        """An out-of-turn status event of the agent, delivered on this screen's own task."""

        def __init__(self, event: AgentEvent) -> None:
            super().__init__()
            self.event = event

    def _on_agent_status(self, event: AgentEvent) -> None:
        # The agent may call from a task outside the app's context (a shared kernel): hop via the queue.
        self.post_message(self.AgentStatus(event))

    def on_main_screen_agent_status(self, message: AgentStatus) -> None:
        event = message.event
        if self.agent is None:
            return
        match event:
            case KernelStatus(state=state) if event.agent_id == self.agent.agent_id:
                self.status_bar.set_kernel(state)
            case UsageUpdate() if event.agent_id == self.agent.agent_id:
                self.status_bar.set_usage(event)
            case SubagentStatus():
                self.conversation.subagent_status(event)
                self.query_one(SidePanel).update_subagent(event)

    # -- input -----------------------------------------------------------------------------------------

    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        text = message.text
        if not text.strip():
            return
        outcome = await self.host.handle_slash(text)
        if outcome == "invalid":
            return
        if outcome == "done":
            self.prompt.remember(text)
            self.prompt.clear_input()
            return
        if self.turn_running:
            self.notify(
                "A turn is running: wait for it to end, or press Esc to cancel it.", severity="warning"
            )
            return
        if self.read_only:
            self.notify("This session is read-only: Ctrl+N or /new starts a new one.", severity="warning")
            return
        if not self.host.agent_ready:
            self.notify("The agent is still starting; try again in a moment.", severity="warning")
            return
        if self.agent is None:
            problem = self.host.startup_error or "No model is set."
            await self.conversation.notice(setup_guide(problem), title="Set up a model first")
            self.notify("No model is set: type /model PROVIDER:NAME (see the guide).", severity="error")
            return
        self.prompt.remember(text)
        self.prompt.clear_input()
        self.start_turn(self.host.prompt_text(text))

    async def on_prompt_input_help_requested(self) -> None:
        await self.host.handle_slash("/help")

    def on_prompt_input_escaped(self) -> None:
        if self.turn_running:
            self.action_cancel_turn()
            return
        draft = self.prompt.text
        if not draft.strip():
            return
        now = time.monotonic()
        if now - self._escaped_at > _CLEAR_WINDOW:  # one Esc never loses a draft
            self._escaped_at = now
            self.notify("Press Esc again to clear the draft (Up brings it back).", timeout=_CLEAR_WINDOW)
            return
        self._escaped_at = 0.0
        self.prompt.remember(draft)
        self.prompt.clear_input()

    def on_status_bar_session_clicked(self) -> None:
        self.host.action_copy_session_id()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # None shows the key dimmed: the footer keeps its keys and only restyles them per turn.
        if action == "cancel_turn":
            return True if self.turn_running else None
        if action == "new_session":
            return None if self.turn_running else True
        return True

    def action_cancel_turn(self) -> None:
        if self.agent is not None and self.turn_running:
            self.agent.cancel()

    async def action_new_session(self) -> None:
        await self.host.handle_slash("/new")

    def action_toggle_side_panel(self) -> None:
        panel = self.query_one(SidePanel)
        panel.toggle()
        if panel.display:
            self._refresh_sessions()

    def _refresh_sessions(self) -> None:
        try:
            sessions = SessionStore(self.host.config.resolved_sessions_dir()).list()
        except Exception as exc:  # a broken sessions dir must not break the chat
            self.notify(f"Cannot list sessions: {exc}", severity="warning")
            return
        self.query_one(SidePanel).set_sessions(sessions, self.agent.session_id if self.agent else None)

    async def on_side_panel_session_chosen(self, message: SidePanel.SessionChosen) -> None:
        if self.agent is None or message.session_id != self.agent.session_id:
            await self.host.handle_slash(f"/resume {message.session_id}")

    def on_side_panel_subagent_selected(self, message: SidePanel.SubagentSelected) -> None:
        self.conversation.scroll_to_call(message.corr_id)

    def action_focus_log(self) -> None:
        self.conversation.focus()

    def action_toggle_details(self) -> None:
        collapsibles = list(self.conversation.query(Collapsible))
        expand = any(c.collapsed for c in collapsibles)
        for collapsible in collapsibles:
            collapsible.collapsed = not expand

    # -- turns -----------------------------------------------------------------------------------------

    def start_turn(self, prompt: str) -> None:
        """Run one turn of the agent for ``prompt`` in the exclusive turn worker."""
        self.turn_running = True
        self.prompt.add_class("-busy")
        self.refresh_bindings()
        self.run_turn(prompt)

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def run_turn(self, prompt: str) -> None:
        """Consume one turn's events; an agent exception becomes an error block, never a crash."""
        agent = self.agent
        log = self.conversation
        assert agent is not None
        await log.add_user(prompt)
        self.status_bar.set_activity("thinking")
        try:
            async for event in agent.stream(prompt):
                match event:
                    case ThoughtsChunk():
                        await log.thought_chunk(event)
                    case Thoughts():
                        await log.thought_end(event)
                    case ResponseChunk():
                        await log.response_chunk(event)
                    case Response():
                        await log.response_end(event)
                    case ApprovalRequest():
                        await self._on_approval_request(event)
                    case CodeExecutionOutputChunk():
                        self.status_bar.set_activity("running")
                        await log.output_chunk(event)
                    case CodeExecutionOutput():
                        await log.output_end(event)
                        self.status_bar.set_activity("thinking")
                    case ToolOutput():
                        await log.tool_output(event)
                    case ProtocolSwitch(reason=reason):
                        await log.notice(reason, title="Text actions")
                    case ModelRetry():
                        await log.notice(
                            f"{event.reason}. Retry {event.attempt} of {event.attempts} in {event.delay:g} s.",
                            title="Model busy: retrying",
                        )
                    case Cancelled(phase=phase):
                        await log.finish_streams()
                        await log.notice(f"Cancelled ({phase}).", title="Turn cancelled")
                    case AgentError(message=message, kind=kind):
                        await log.finish_streams()
                        await log.error(
                            message, title=f"{kind.capitalize()} error", parent_corr_id=event.parent_corr_id
                        )
                    case UsageUpdate():
                        if event.agent_id == agent.agent_id:
                            self.status_bar.set_usage(event)
                    case KernelStatus(state=state) if event.agent_id == agent.agent_id:
                        self.status_bar.set_kernel(state)
                    case SubagentStatus():
                        self.conversation.subagent_status(event)
                        self.query_one(SidePanel).update_subagent(event)
        except Exception as exc:  # the app must survive any agent failure
            await log.finish_streams()
            await log.error(f"{type(exc).__name__}: {exc}", title="Internal error")
        finally:
            await log.finish_streams()
            self.approvals.clear()
            self.turn_running = False
            self.status_bar.set_activity("")
            self.prompt.remove_class("-busy")
            self.refresh_bindings()

    # -- approvals --------------------------------------------------------------------------------------

    async def _on_approval_request(self, request: ApprovalRequest) -> None:
        block = await self.conversation.add_action(request)
        if request.decided:
            self._approval_settled(request, block)
            return
        block.set_status("waiting for approval", pending=True)
        self.approvals.add(request, block)

    def _approval_settled(self, request: ApprovalRequest, block: ActionBlock) -> None:
        self._mark(block, request)
        if request.decision is not None and request.decision.approved:
            self.status_bar.set_activity("running")

    def _mark(self, block: ActionBlock, request: ApprovalRequest) -> None:
        decision = request.decision
        if decision is None:
            block.set_status("cancelled", rejected=True)
        elif decision.by_rule:
            skip = self.agent is not None and self.agent.skip_permissions
            source = "--skip-permissions" if skip else "rule"
            block.set_status(
                f"auto-approved by {source}" if decision.approved else f"rejected by {source}",
                rejected=not decision.approved,
            )
        elif decision.approved:
            rule = f" · {decision.remember} rule: {decision.pattern}" if decision.remember else ""
            block.set_status(f"approved{rule}")
        else:
            rule = f" · {decision.remember} deny rule: {decision.pattern}" if decision.remember else ""
            block.set_status(f"rejected{rule}", rejected=True)
