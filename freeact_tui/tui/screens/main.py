"""The main screen: conversation log, prompt and status bar; runs turns and asks for approvals."""

from __future__ import annotations

import time
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widget import Widget
from textual.widgets import Input, TextArea
from textual.worker import Worker

from freeact_tui.tui.approval_modes import ApprovalModeKeys
from freeact_tui.tui.layout_tracking import LayoutTrackingScreen
from freeact_tui.tui.notify import Notifier
from freeact_tui.tui.screens.chat_host import ChatHost, read_only_reason
from freeact_tui.tui.screens.prompt_flow import PromptFlow
from freeact_tui.tui.toast_place import keep_toasts_above
from freeact_tui.tui.widgets.completion_menu import CompletionMenu
from freeact_tui.tui.widgets.conversation import ConversationLog
from freeact_tui.tui.widgets.find_bar import FindBar, block_text
from freeact_tui.tui.widgets.follow_marker import NewOutputMarker
from freeact_tui.tui.widgets.key_footer import KeyFooter
from freeact_tui.tui.widgets.prompt import PromptInput
from freeact_tui.tui.widgets.queued import QueuedMessages
from freeact_tui.tui.widgets.side_panel import SidePanel
from freeact_tui.tui.widgets.status_bar import StatusBar

# Not needed for the first frame, imported where used: the events and the blocks, past turns (replay),
# approvals, the file picker, the pager, the prompt's completions, the session store.
if TYPE_CHECKING:
    from freeact_tui.agent.agent import Agent
    from freeact_tui.events import AgentEvent
    from freeact_tui.tui.screens.approval_controller import ApprovalController
    from freeact_tui.tui.screens.event_router import AgentStatus, EventRouter
    from freeact_tui.tui.screens.file_picker import FileIndexCache
    from freeact_tui.tui.screens.prompt_completer import PromptCompleter
    from freeact_tui.tui.widgets.blocks import ActionBlock, Block
    from freeact_tui.tui.widgets.blocks.output import AnsiLog

_TURN = Binding.Group("Turn")


_CLEAR_WINDOW = 2.0
"""Seconds within which a second Esc clears the prompt's draft."""


ASK_ANYTHING = "Ask anything · Enter sends · Ctrl+J newline · /help"


class MainScreen(LayoutTrackingScreen, ApprovalModeKeys):
    """The chat: one turn at a time, approvals queued in dialogs, status kept current."""

    CSS_PATH = "main.tcss"
    AUTO_FOCUS = "#prompt"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel_turn", "Cancel turn", id="main.cancel", group=_TURN),
        Binding("ctrl+n", "new_session", "New session", id="main.new_session"),
        Binding("ctrl+o", "toggle_details", "Expand/collapse", id="main.toggle_details"),
        Binding("ctrl+b", "toggle_side_panel", "Side panel", id="main.side_panel"),
        Binding("ctrl+l", "focus_log", "Scroll log", id="main.focus_log", show=False),
        Binding("ctrl+g", "follow_log", "Latest output", id="main.follow_log", show=False),
        # Alt+letter keys arrive as printable characters: priority, or a focused input would insert them.
        Binding(
            "alt+s", "steer", "Send into the running turn", id="main.steer", group=_TURN, show=False, priority=True
        ),
        Binding("ctrl+f", "find", "Find in the log", id="main.find", show=False),
        Binding("alt+o", "open_pager", "Long output in a pager", id="main.pager", show=False, priority=True),
        Binding("alt+c", "copy_block", "Copy found block, else last answer", id="main.copy_block", show=False, priority=True),
    ]

    def __init__(self, host: ChatHost) -> None:
        super().__init__()
        self.host = host
        self.turn_running = False
        self.read_only = False
        self._escaped_at = 0.0
        self._compaction: Worker[None] | None = None
        self.work_dir = host.launch.working_dir or Path.cwd()
        self.flow = PromptFlow(self)
        config = host.launch
        self.notifier = Notifier(
            write=self._write_terminal,
            focused=lambda: self.app.app_focus,
            bell=config.notify_bell,
            desktop=config.notify_desktop,
            after=config.notify_after,
        )

    def _write_terminal(self, text: str) -> None:
        driver = getattr(self.app, "_driver", None)
        if driver is not None and not self.app.is_headless:
            driver.write(text)

    def compose(self) -> ComposeResult:
        yield SidePanel(clock=self.host.clock, id="side-panel")
        yield ConversationLog(id="conversation")
        yield NewOutputMarker("Ctrl+G", id="output-below")
        yield FindBar(id="find-bar")
        yield QueuedMessages(id="queued")
        yield CompletionMenu(id="completion-menu")
        prompt = PromptInput(id="prompt")
        prompt.placeholder = ASK_ANYTHING  # at once: what is typed before the agent is open is queued, not lost
        yield prompt
        yield StatusBar(id="status-bar")
        yield KeyFooter()

    def on_mount(self) -> None:
        keep_toasts_above(self, self.prompt)  # notifications cover neither the prompt nor the token counts
        self.prompt.scroll_log = self.conversation  # PageUp/PageDown (Home/End when empty) scroll it from the prompt

    @cached_property
    def router(self) -> EventRouter:
        """Shows the agent's events on this screen."""
        from freeact_tui.tui.screens.event_router import EventRouter

        return EventRouter(self)

    @cached_property
    def files(self) -> FileIndexCache:
        """The working dir's files, for ``@`` mentions (indexed on first use)."""
        from freeact_tui.tui.screens.file_picker import FileIndexCache

        # Read when the index is built: the folder may be trusted since this screen was made.
        return FileIndexCache(self.work_dir, use_git=lambda: self.host.config.project_trusted)

    @cached_property
    def approvals(self) -> ApprovalController[ActionBlock]:
        """The approval dialogs of this screen's turns."""
        from freeact_tui.tui.screens.approval_controller import ApprovalController

        return ApprovalController(
            self,
            on_count=lambda count: self.status_bar.set_waiting(count),
            on_settled=self.router.approval_settled,
            on_asking=lambda: self.status_bar.set_activity("waiting"),
        )

    @cached_property
    def completer(self) -> PromptCompleter:
        """The prompt's completions (slash commands, skills, ``@`` files, session ids)."""
        from freeact_tui.tui.screens.prompt_completer import PromptCompleter

        return PromptCompleter(
            self.prompt,
            self.query_one(CompletionMenu),
            files=self.files,
            skills=self.host.skill_entries,
            sessions_dir=self.host.config.resolved_sessions_dir,
            notify=lambda text: self.notify(text, timeout=3),
        )

    @property
    def conversation(self) -> ConversationLog:
        return self.query_one(ConversationLog)

    @property
    def prompt(self) -> PromptInput:
        return self.query_one(PromptInput)

    @property
    def queue(self) -> QueuedMessages:
        return self.query_one(QueuedMessages)

    @property
    def status_bar(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def side_panel(self) -> SidePanel:
        return self.query_one(SidePanel)

    @property
    def agent(self) -> Agent | None:
        return self.host.agent

    @property
    def compacting_by_hand(self) -> bool:
        return self._compaction is not None

    # -- the agent ---------------------------------------------------------------------------------------

    async def show_agent(self) -> None:
        """Render the current agent: status, past turns of a resumed session, a damaged-session warning."""
        agent = self.agent
        self.read_only = False
        self.prompt.disabled = False
        self.prompt.placeholder = ASK_ANYTHING
        if agent is None:
            self.status_bar.set_session(model="no model", session_id="-", mode="-", skip_permissions=False)
            self.status_bar.set_protocol(None)
            if self.host.startup_error:
                await self.conversation.error(self.host.startup_error, title="Cannot start the agent")
            return
        agent.subscribe(self._post_status)
        self.query_one(SidePanel).clear_subagents()
        if self.query_one(SidePanel).display:
            self._refresh_sessions()
        await self.router.show(agent)
        reason = read_only_reason(agent)
        if reason is not None:
            await self.conversation.error(reason.message, title=reason.title)
            self.read_only = True
            self.prompt.placeholder = reason.placeholder
        self.refresh_bindings()

    def _post_status(self, event: AgentEvent) -> None:
        # The agent may call from a task outside the app's context (a shared kernel): hop via the queue.
        from freeact_tui.tui.screens.event_router import AgentStatus

        self.post_message(AgentStatus(event))

    async def on_agent_status(self, message: AgentStatus) -> None:
        if self.agent is not None:
            await self.router.route(message.event, self.agent)

    # -- input -----------------------------------------------------------------------------------------

    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        await self.flow.submit(message.text)

    def on_text_area_changed(self, message: TextArea.Changed) -> None:
        if message.text_area is self.prompt:
            self.completer.refresh()

    def on_text_area_selection_changed(self, message: TextArea.SelectionChanged) -> None:
        if message.text_area is self.prompt:
            self.completer.refresh()

    def on_prompt_input_completion_requested(self, message: PromptInput.CompletionRequested) -> None:
        self.run_worker(self.completer.complete(message.context), group="complete", exclusive=True, exit_on_error=False)

    def on_prompt_input_completion_chosen(self, message: PromptInput.CompletionChosen) -> None:
        self.completer.chosen(message.context, message.completion, run=message.run)

    def on_completion_menu_clicked(self, message: CompletionMenu.Clicked) -> None:
        self.completer.chosen(message.context, message.completion, run=True)

    def on_prompt_input_menu_dismissed(self) -> None:
        self.completer.dismissed()

    def on_prompt_input_mention_requested(self) -> None:
        from freeact_tui.tui.screens.file_picker import FilePicker

        def insert(path: str | None) -> None:
            self.prompt.focus()
            if path and path.startswith("/"):  # a skill: invoked from the prompt's start, as freeact does
                self.prompt.start_with(path)
            elif path:
                self.prompt.insert(path + " ")

        self.app.push_screen(FilePicker(self.files, skills=self.host.skill_entries()), insert)

    async def action_steer(self) -> None:
        """Send the typed message into the running turn (the model gets it at its next step)."""
        await self.flow.steer()

    def on_queued_messages_edit_requested(self, message: QueuedMessages.EditRequested) -> None:
        self.flow.edit_queued(message.text)

    def send_queued(self) -> None:
        """Send what was typed while the agent was opening (the app calls this once it is)."""
        self.call_later(self.flow.send_next)

    def action_find(self) -> None:
        self.query_one(FindBar).open(self.conversation.blocks)

    def on_find_bar_jump(self, message: FindBar.Jump) -> None:
        if message.block is not None and message.block.is_attached:
            self.conversation.release_anchor()
            self.conversation.scroll_to_widget(message.block, top=True, animate=False)

    def on_find_bar_closed(self) -> None:
        self.prompt.focus()

    def action_copy_block(self) -> None:
        """Copy the block the find bar shows, else the last answer."""
        from freeact_tui.tui.widgets.blocks import ResponseBlock

        block: Block | None = self.query_one(FindBar).found
        if block is None:
            answers = list(self.conversation.query(ResponseBlock))
            block = answers[-1] if answers else None
        self.copy_block(block)

    def copy_block(self, block: Block | None) -> None:
        text = block_text(block) if block is not None else ""
        if not text:
            self.notify("Nothing to copy yet.", severity="warning")
            return
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {len(text):,} characters")

    def start_user_shell(self, command: str) -> None:
        """Run the user's own ``!command`` in the kernel (no approval); the next prompt carries it."""
        self._set_busy(True)
        self.run_user_shell(command)

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def run_user_shell(self, command: str) -> None:
        assert self.agent is not None
        from freeact_tui.tui.screens.user_shell import show_user_shell

        try:
            await show_user_shell(self.agent, self.conversation, self.status_bar, command)
        finally:
            self._set_busy(False)
            self.call_later(self.flow.send_next)

    async def on_prompt_input_help_requested(self) -> None:
        await self.host.handle_slash("/help")

    def on_prompt_input_escaped(self) -> None:
        if self.turn_running:
            self.action_cancel_turn()
            return
        draft = self.prompt.message
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
        if action == "steer":
            return True if self.turn_running else None
        return True

    def action_cancel_turn(self) -> None:
        if self._compaction is not None and not self._compaction.is_finished:
            self._compaction.cancel()  # nothing is written until the summary is complete
        elif self.agent is not None and self.turn_running:
            self.flow.hold_queue = True  # the user stopped: queued messages wait to be sent or edited
            self.agent.cancel()

    async def action_new_session(self) -> None:
        await self.host.handle_slash("/new")

    def action_toggle_side_panel(self) -> None:
        panel = self.query_one(SidePanel)
        panel.toggle()
        if panel.display:
            self._refresh_sessions()

    def _refresh_sessions(self) -> None:
        from freeact_tui.store.sessions import SessionStore

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

    def action_follow_log(self) -> None:
        """Jump to the latest output and follow it again."""
        self.conversation.follow()

    def on_conversation_log_output_below(self, message: ConversationLog.OutputBelow) -> None:
        self.query_one(NewOutputMarker).show(message.below)

    def on_new_output_marker_clicked(self) -> None:
        self.action_follow_log()

    def on_key(self, event: events.Key) -> None:
        """Typing while the log (or another non-input widget) has focus goes to the prompt: printable
        keys, Backspace and Enter (which sends), unless the focused widget binds the key."""
        prompt = self.prompt
        typed = event.is_printable and event.character is not None
        if isinstance(self.focused, (TextArea, Input)) or prompt.disabled or prompt.read_only:
            return
        if not (typed or event.key in ("enter", "backspace")) or event.key in self.app.active_bindings:
            return
        event.stop()
        event.prevent_default()
        prompt.focus()
        if event.key == "enter":
            prompt.post_message(PromptInput.Submitted(prompt, prompt.message))
        elif event.key == "backspace":
            prompt.action_delete_left()
        elif event.character is not None:
            prompt.insert(event.character)

    def action_toggle_details(self) -> None:
        from freeact_tui.tui.widgets.blocks.output import toggle_details
        from freeact_tui.tui.widgets.log_place import LogPlace

        log = self.conversation
        place = LogPlace.of(log, log.following, self.focused)  # the reader's block stays where it is
        toggle_details(log)
        self.call_after_refresh(place.restore, log)

    def action_open_pager(self, focused: Widget | None = None) -> None:
        """Alt+O: the focused output, the found one, else the last long one, whole, with search."""
        from freeact_tui.tui.screens.pager import PagerScreen, output_to_page

        page = output_to_page(self.conversation, focused or self.focused, self.query_one(FindBar).found)
        if page is None:
            self.notify("No output to show yet.", severity="warning")
            return
        self.app.push_screen(PagerScreen(*page))

    def on_ansi_log_pager_requested(self, message: AnsiLog.PagerRequested) -> None:
        self.action_open_pager(message.log)

    # -- turns -----------------------------------------------------------------------------------------

    def _set_busy(self, busy: bool) -> None:
        """A turn, a ``!command`` or a ``/compact`` starts (or has ended): the prompt and keys show it."""
        self.turn_running = busy
        if busy:
            self.prompt.add_class("-busy")
        else:
            self.status_bar.set_activity("")
            self.prompt.remove_class("-busy")
        self.refresh_bindings()

    def start_turn(self, prompt: str, shown: str | None = None) -> None:
        """Run one turn of the agent for ``prompt`` in the exclusive turn worker."""
        self._set_busy(True)
        self.run_turn(prompt, shown)

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def run_turn(self, prompt: str, shown: str | None = None) -> None:
        """Consume one turn's events; an agent exception becomes an error block, never a crash."""
        agent = self.agent
        log = self.conversation
        assert agent is not None
        await log.add_user(prompt if shown is None else shown)  # attached files go to the model only
        self.status_bar.set_activity("thinking")
        started = time.monotonic()
        outcome = "The turn ended"
        try:
            async for event in agent.stream(prompt):
                outcome = await self.router.route(event, agent) or outcome
        except Exception as exc:  # the app must survive any agent failure: shown as the error a turn ends on
            from freeact_tui.agent.turn.failures import failure_of

            outcome = await self.router.route(failure_of(exc).event(), agent) or outcome
        finally:
            await log.finish_streams()
            self.approvals.clear()
            self.notifier.turn_finished(time.monotonic() - started, outcome)
            self._set_busy(False)
            self.call_later(self.flow.send_next)

    # -- compaction ------------------------------------------------------------------------------------

    def start_compaction(self, focus: str) -> None:
        """``/compact [focus]``: summarise the older turns now (Esc cancels; nothing changes then)."""
        if self.turn_running:
            self.notify("A turn is running: /compact must wait until it ends.", severity="warning")
            return
        self._set_busy(True)
        self._compaction = self.run_compaction(focus)

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def run_compaction(self, focus: str) -> None:
        agent = self.agent
        assert agent is not None
        self.status_bar.set_activity("compacting")
        try:
            if await agent.compact(focus or None) is None:
                await self.conversation.notice(
                    "Nothing to compact yet: the recent turns are kept verbatim.", title="Compact"
                )
        except Exception as exc:  # the history is unchanged; say why
            await self.conversation.error(str(exc), title="Compaction failed")
        finally:
            self._compaction = None
            self._set_busy(False)
