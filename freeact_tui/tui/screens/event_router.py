"""Where each agent event goes on the main screen: one router for both ways events arrive.

A turn's events come from ``Agent.stream()`` in the screen's turn worker; between turns the agent
publishes its status events (kernel, usage, context, subagents, checkpoints) to ``Agent.subscribe``
listeners instead. Both hand every event to ``EventRouter.route``, so an event looks the same
whichever way it came.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from textual.message import Message

from freeact_tui.agent.reply_stops import reply_stop
from freeact_tui.events import (
    AgentError,
    AgentEvent,
    ApprovalRequest,
    Cancelled,
    CheckpointNotice,
    CodeExecutionOutput,
    CodeExecutionOutputChunk,
    Compacted,
    Compacting,
    ContextUpdate,
    KernelStatus,
    ModelRetry,
    ModelWaiting,
    Nudge,
    OutputClaim,
    ProjectFileRefused,
    ProtocolSwitch,
    ReplyStopped,
    Response,
    ResponseChunk,
    SubagentStatus,
    Thoughts,
    ThoughtsChunk,
    ToolOutput,
    UsageUpdate,
)
from freeact_tui.execution.base import RESTART_AFTER_INTERRUPT
from freeact_tui.toolcalls import CodeAction
from freeact_tui.tui.decisions import decision_status
from freeact_tui.tui.screens.chat_host import welcome_text

MAIN_AGENT = "main"
"""The agent a resumed session's tail is drawn for before it has loaded (its replay's own id)."""
WAITING_FOR_KERNEL = "waiting for the kernel"  # the activity of an approved action until the kernel is up
WAITING_FOR_MODEL = "waiting for the model"  # the activity while a model request sends nothing (ModelWaiting)


def waiting_line(event: ModelWaiting) -> str:
    """The live line of a silent model request: ``waiting for the model · 12 s · Esc cancels``."""
    return f"{WAITING_FOR_MODEL} · {int(event.seconds)} s · Esc cancels"

if TYPE_CHECKING:
    from textual.widget import Widget

    from freeact_tui.agent.agent import Agent
    from freeact_tui.events import Decision
    from freeact_tui.tui.notify import Notifier
    from freeact_tui.tui.replay import PastApproval, ReplayItem
    from freeact_tui.tui.screens.approval_controller import ApprovalController
    from freeact_tui.tui.widgets.blocks import ActionBlock
    from freeact_tui.tui.widgets.conversation import ConversationLog
    from freeact_tui.tui.widgets.side_panel import SidePanel
    from freeact_tui.tui.widgets.status_bar import StatusBar


class AgentStatus(Message):
    """An out-of-turn status event of the agent, delivered on the screen's own task."""

    def __init__(self, event: AgentEvent) -> None:
        super().__init__()
        self.event = event


class EventView(Protocol):
    """What the router shows events on (``MainScreen``), so that it never imports the screen."""

    @property
    def agent(self) -> Agent | None: ...
    @property
    def conversation(self) -> ConversationLog: ...
    @property
    def status_bar(self) -> StatusBar: ...
    @property
    def side_panel(self) -> SidePanel: ...
    @property
    def approvals(self) -> ApprovalController[ActionBlock]: ...
    @property
    def notifier(self) -> Notifier: ...
    @property
    def turn_running(self) -> bool: ...
    @property
    def compacting_by_hand(self) -> bool:
        """A ``/compact`` worker runs (it clears the activity itself when it ends)."""
        ...


TUI_EVENTS: dict[str, str] = {
    "ThoughtsChunk": "the thought block, streamed",
    "Thoughts": "the thought block, ended",
    "ResponseChunk": "the reply, streamed",
    "Response": "the reply, ended",
    "ApprovalRequest": "the action block and the approval dialog",
    "CodeExecutionOutputChunk": "the action's output, streamed",
    "CodeExecutionOutput": "the action's output",
    "ToolOutput": "the action's output",
    "ProtocolSwitch": "a notice",
    "CheckpointNotice": "a notice",
    "ProjectFileRefused": "a notice (the project file not used, and why)",
    "Nudge": "a notice under the reply that was not the answer",
    "ModelRetry": "a notice",
    "OutputClaim": "a notice",
    "ReplyStopped": "a notice under the reply",
    "Cancelled": "the turn's end",
    "AgentError": "the turn's end, with the error",
    "UsageUpdate": "the status bar",
    "ContextUpdate": "the context gauge",
    "Compacting": "the context gauge and a notice",
    "Compacted": "the context gauge and a notice",
    "KernelStatus": "the kernel indicator",
    "ModelWaiting": "the status line: a live count of the wait, until the model sends something",
    "SubagentStatus": "the subagent's status in the log and the side panel",
}
"""How each agent event is shown (by event class name): total over ``freeact_tui/events.py``
(``tests/fast/acp/test_event_mappings.py``)."""


class EventRouter:
    """Shows agent events on the main screen: one ``match`` on the event type for every channel.

    Args:
        view: The screen the events are shown on.
    """

    def __init__(self, view: EventView) -> None:
        self.view = view
        self._tail: list[ReplayItem] = []
        """The items a resumed session's tail was drawn from before its agent loaded (``preview``)."""

    async def route(self, event: AgentEvent, agent: Agent | None) -> str | None:
        """Show one event of ``agent`` (the turn's, or the screen's current one between turns; None: a
        resumed session's tail drawn before its agent has loaded).

        Returns:
            How the turn ended, for the events that end it (cancelled, failed); else None.
        """
        view = self.view
        log = view.conversation
        if agent is not None:
            view.status_bar.set_readings(agent.readings_lost)  # a cell ran, or the kernel started again
            self._model_wait(event, agent)
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
                await self._approval_request(event)
            case CodeExecutionOutputChunk() | CodeExecutionOutput() | ToolOutput():
                await self._action_output(event)
            case (
                ProtocolSwitch()
                | CheckpointNotice()
                | ProjectFileRefused()
                | Nudge()
                | ModelRetry()
                | OutputClaim()
                | ReplyStopped()
            ):
                text, title = _notice(event)
                await log.notice(text, title=title)
            case Cancelled() | AgentError():
                await log.finish_streams()
                return await self._turn_end(event)
            case UsageUpdate():
                if agent is not None and event.agent_id == agent.agent_id:
                    view.status_bar.set_usage(event)
            case ContextUpdate() | Compacting() | Compacted():
                await self._context_event(event, agent.agent_id if agent is not None else MAIN_AGENT)
            case KernelStatus() if agent is not None and event.agent_id == agent.agent_id:
                await self._kernel_status(event)
            case SubagentStatus():
                log.subagent_status(event)
                view.side_panel.update_subagent(event)
        return None

    def _model_wait(self, event: AgentEvent, agent: Agent) -> None:
        """The status line while a model request of ``agent`` sends nothing (a live count), and after."""
        bar = self.view.status_bar
        if isinstance(event, ModelWaiting):
            if event.agent_id == agent.agent_id:
                bar.set_activity(waiting_line(event))
        elif bar.activity.startswith(WAITING_FOR_MODEL):
            bar.set_activity("thinking")  # the model sent something (or the turn ended): the wait is over

    async def _action_output(self, event: CodeExecutionOutputChunk | CodeExecutionOutput | ToolOutput) -> None:
        """An action's output: streamed while its code runs, then whole (the model thinks again)."""
        log, bar = self.view.conversation, self.view.status_bar
        match event:
            case CodeExecutionOutputChunk():
                bar.set_activity("running")
                await log.output_chunk(event)
            case CodeExecutionOutput():
                await log.output_end(event)
                bar.set_activity("thinking")
            case ToolOutput():
                await log.tool_output(event)

    async def _turn_end(self, event: Cancelled | AgentError) -> str:
        """Show what ended the turn; how it ended, for the status line."""
        log = self.view.conversation
        if isinstance(event, Cancelled):
            await log.notice(f"Cancelled ({event.phase}).", title="Turn cancelled")
            return "The turn was cancelled"
        kind = event.kind
        title = "Stopped" if kind in ("repeat", "stalled") else f"{kind.capitalize()} error"
        await log.error(event.message, title=title, parent_corr_id=event.parent_corr_id)
        if kind == "stalled":
            return "The turn stopped (no progress)"
        return "The turn stopped (the same error twice)" if kind == "repeat" else f"The turn failed ({kind} error)"

    async def _kernel_status(self, event: KernelStatus) -> None:
        bar = self.view.status_bar
        bar.set_kernel(event.state)
        if event.state in ("ready", "busy") and bar.activity == WAITING_FOR_KERNEL:
            bar.set_activity("running")
        if event.state == "restarting" and event.detail == RESTART_AFTER_INTERRUPT:
            await self.view.conversation.notice(
                "The kernel did not stop when interrupted, so it is being restarted: its variables are gone.",
                title="Kernel restarted",
            )

    async def show(self, agent: Agent) -> None:
        """An agent just shown: its figures in the status bar, then its past turns (drawn as live) or
        the welcome."""
        bar = self.view.status_bar
        bar.set_session(
            model=agent.model_name,
            session_id=agent.session_id,
            mode=agent.execution_mode,
            skip_permissions=agent.skip_permissions,
        )
        bar.set_approval_mode(agent.permissions.mode)
        bar.set_readings(agent.readings_lost)
        bar.set_kernel(agent.kernel_state)
        bar.set_protocol(agent.action_protocol)
        bar.set_usage(agent.usage)
        bar.set_context(agent.context_usage())
        tail, self._tail = self._tail, []
        if agent.history or agent.recorder.rewinds:  # the whole transcript (turns before a compaction too)
            from freeact_tui.tui.replay import replay_history, subagent_loader
            from freeact_tui.tui.replay_tail import before_tail

            past = await asyncio.to_thread(
                replay_history, agent.transcript, subagent_loader(agent), rewinds=agent.recorder.rewinds
            )
            earlier = before_tail(past, tail) if tail else None
            if earlier is not None:
                await self._hold(earlier, tail, agent)
                return
            if tail:  # the whole does not end as the tail did: drawn again from the whole
                await self.view.conversation.clear()
            await self.replay(past, agent)
        else:
            if tail:
                await self.view.conversation.clear()
            await self.view.conversation.welcome(welcome_text(agent.model_name, agent.working_dir))

    async def preview(self, agent: Agent) -> None:
        """A resumed session's last turns, drawn from the end of its file before the agent loads the whole
        history (``replay_tail``); ``show`` then keeps them, or draws the log again from the whole."""
        from freeact_tui.tui.replay import subagent_loader
        from freeact_tui.tui.replay_tail import tail_items

        log = self.view.conversation
        tail = tail_items(agent.session, log.screenful(), subagent_loader(agent))
        if not tail:
            return
        async with log.replay():
            await self._draw(tail, None)
        self.view.status_bar.set_activity("")
        self._tail = tail

    async def _hold(self, earlier: list[ReplayItem], tail: list[ReplayItem], agent: Agent) -> None:
        """The items before a drawn tail wait as earlier turns, drawn on demand."""
        from freeact_tui.tui.replay_tail import is_turn_start

        log = self.view.conversation
        log.earlier.keep(earlier, is_turn_start, self._drawer(agent))
        self._list_subagents([*earlier, *tail])  # (the panel was cleared when the agent was shown)
        await log.earlier.show_note(log)

    def _drawer(self, agent: Agent) -> Callable[[list[ReplayItem]], Awaitable[list[Widget]]]:
        """Draws some past items into blocks, not mounted (earlier turns, on demand)."""
        log = self.view.conversation

        async def draw(part: list[ReplayItem]) -> list[Widget]:
            async with log.drawing() as blocks:
                await self._draw(part, agent)
            self.view.status_bar.set_activity("")
            return list(blocks)

        return draw

    def _list_subagents(self, items: list[ReplayItem]) -> None:
        """The side panel lists every subagent of the session, as live (those of turns not drawn too)."""
        for item in items:
            if isinstance(item, SubagentStatus):
                self.view.side_panel.update_subagent(item)

    async def replay(self, items: list[ReplayItem], agent: Agent) -> None:
        """Draw a resumed session's past turns with the methods that draw live events: the last turns
        now, the earlier ones when the user asks for them (the log holds them, ``EarlierTurns``)."""
        from freeact_tui.tui.replay import UserPrompt

        log = self.view.conversation
        shown = log.earlier.hold(items, log.screenful(), lambda item: isinstance(item, UserPrompt), self._drawer(agent))
        self._list_subagents(log.earlier.items)
        async with log.replay():
            await self._draw(shown, agent)
        self.view.status_bar.set_activity("")  # the outputs above set it as they would live

    async def _draw(self, items: list[ReplayItem], agent: Agent | None) -> None:
        from freeact_tui.tui.replay import LogNotice, PastApproval, UserPrompt

        log = self.view.conversation
        for item in items:
            match item:
                case UserPrompt(text=text):
                    await log.add_user(text)
                case LogNotice(text=text, title=title):
                    await log.notice(text, title=title)
                case PastApproval():
                    await self._past_approval(item)
                case _:
                    await self.route(item, agent)

    async def _past_approval(self, past: PastApproval) -> None:
        """An action of a past turn, drawn as its approval request was (decided, or never decided)."""
        request = ApprovalRequest(
            past.tool_call, agent_id=past.agent_id, corr_id=past.corr_id, parent_corr_id=past.parent_corr_id
        )
        if past.decision is not None:
            request.resolve(past.decision)
        block = await self.view.conversation.add_action(request)
        self._show_decision(block, past.decision, skip_permissions=past.skip_permissions)

    async def _context_event(self, event: ContextUpdate | Compacting | Compacted, agent_id: str) -> None:
        """The context of ``agent_id``'s agent (a subagent's own is not shown)."""
        view = self.view
        if event.agent_id != agent_id:
            return
        match event:
            case ContextUpdate():
                view.status_bar.set_context(event)
            case Compacting() if view.turn_running:  # (a late event of a failed /compact changes nothing)
                view.status_bar.set_activity("compacting")
            case Compacted():
                from freeact_tui.tui.context_report import compacted_note  # (imports the replay module)

                await view.conversation.notice(compacted_note(event), title="Context compacted")
                # Auto-compaction: the turn goes on; by hand: the worker clears the activity when it ends.
                view.status_bar.set_activity("thinking" if view.turn_running and not view.compacting_by_hand else "")

    async def _approval_request(self, request: ApprovalRequest) -> None:
        view = self.view
        block = await view.conversation.add_action(request)
        if request.decided:
            self.approval_settled(request, block)
            return
        block.set_status("waiting for approval", pending=True)
        view.approvals.add(request, block)
        first_line = request.tool_call.display_text().strip().splitlines()[:1]
        view.notifier.approval_waiting(f"[{request.agent_id}] {first_line[0] if first_line else request.tool_name}")

    def approval_settled(self, request: ApprovalRequest, block: ActionBlock) -> None:
        """Show the decision on the action's block (the approval controller calls this too)."""
        agent = self.view.agent
        self._show_decision(block, request.decision, skip_permissions=agent is not None and agent.skip_permissions)
        if request.decision is not None and request.decision.approved:
            # An approved code action before the kernel is up waits for it: the bar says so, not "running".
            starting = agent is not None and agent.kernel_state in ("stopped", "starting", "restarting")
            waits = starting and isinstance(request.tool_call, CodeAction)
            self.view.status_bar.set_activity(WAITING_FOR_KERNEL if waits else "running")

    @staticmethod
    def _show_decision(block: ActionBlock, decision: Decision | None, *, skip_permissions: bool) -> None:
        status, rejected = decision_status(decision, skip_permissions=skip_permissions)
        block.set_status(status, rejected=rejected)


def _notice(
    event: ProtocolSwitch | CheckpointNotice | ProjectFileRefused | Nudge | ModelRetry | OutputClaim | ReplyStopped,
) -> tuple[str, str]:
    """The text and title of an event the log shows as a notice."""
    match event:
        case ProtocolSwitch(reason=reason):
            return reason, "Text actions"
        case CheckpointNotice(text=text):
            return text, "Checkpoint"
        case ProjectFileRefused(text=text):
            return text, "Project file not used"
        case Nudge():
            from freeact_tui.tui.replay import nudge_note  # (the replay module: not for the first frame)

            return nudge_note(event.reason, event.message), "Nudged the model"
        case ModelRetry():
            return (
                f"{event.reason}. Retry {event.attempt} of {event.attempts} in {event.delay:g} s.",
                "Model busy: retrying",
            )
        case OutputClaim(text=text):
            return text, "Not a result"
        case ReplyStopped(finish=finish, message=message):
            stop = reply_stop(finish)  # the title from the same row as the message
            return message, stop.title if stop is not None else "Reply stopped"
