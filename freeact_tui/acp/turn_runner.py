"""One ``session/prompt``: the agent's turn streamed as ``session/update``s, its approvals asked with
``session/request_permission`` (while the turn's other events keep flowing), a ``usage_update`` after each
model request, and the reason it stopped."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator
from typing import cast

from acp import text_block, tool_content, update_agent_message_text, update_tool_call
from acp.helpers import update_available_commands
from acp.interfaces import Client
from acp.schema import (
    AgentPlanUpdate,
    AvailableCommand,
    AvailableCommandsUpdate,
    ContentToolCallContent,
    StopReason,
    ToolCallUpdate,
)
from acp.schema import UsageUpdate as AcpUsageUpdate
from pydantic_ai.messages import UserContent

from freeact_tui.acp.client_requests import ClientTimeout, ask_client, decision_bound
from freeact_tui.acp.commands import (
    EDITOR_COMMANDS,
    available_commands,
    command_line,
    run_command,
    skill_prompt,
    skills_of,
)
from freeact_tui.acp.permission import CANCELLED_REASON, decision_for, permission_options
from freeact_tui.acp.session import AcpSession
from freeact_tui.acp.toolcall_view import note_content
from freeact_tui.acp.turn_updates import TurnUpdates, Update
from freeact_tui.acp.usage import usage_update
from freeact_tui.agent.reply_stops import LastReply
from freeact_tui.events import (
    AgentEvent,
    ApprovalRequest,
    CodeExecutionOutput,
    Decision,
    ToolOutput,
    UsageUpdate,
)
from freeact_tui.text.safe import visible

logger = logging.getLogger(__name__)

EDITOR_NAMES = {c.name for c in EDITOR_COMMANDS}

UNREADABLE_NOTE = (
    "A message from the editor could not be read (it is not JSON-RPC); if it was meant as the answer to "
    "this permission request, answer again: the request still waits."
)

SessionUpdate = Update | AvailableCommandsUpdate | AcpUsageUpdate | AgentPlanUpdate
"""What a session's turns and announcements send (``TurnRunner.send``)."""

STOP_REASON_OF_ERROR: dict[str, StopReason] = {
    "limit": "max_turn_requests",  # the turn's budget of model requests ran out
    "stalled": "max_turn_requests",  # steps in a row made no progress: a bound ended it, not an answer
}
"""The ``AgentError`` kinds that end a turn with a stop reason of their own; any other error ends it
with ``end_turn`` and its message. A guard that should map elsewhere is a row here."""


class TurnRunner:
    """Runs the turns of the sessions of one client connection."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def run_prompt(
        self, session: AcpSession, text: str, content: str | list[UserContent]
    ) -> StopReason:
        """A prompt: a command or skill (``/name args``, ``text`` being the prompt's only text) or a turn."""
        line = command_line(text, session.commands)
        if line is None:
            return await self.run(session, content)
        if line.name not in EDITOR_NAMES:  # a skill: freeact's skill prompt, as the app sends it
            return await self.run(session, skill_prompt(line.name, line.args))

        async def say(answer: str) -> None:
            await self.send(session, update_agent_message_text(answer))

        await run_command(session.agent, line, say)
        await self.send_usage(session)  # a command changes the context without a model request (/compact)
        return "cancelled" if session.cancel_requested else "end_turn"

    async def announce(self, session: AcpSession) -> None:
        """What the client shows of a session (just) opened or made again: ``available_commands_update``
        (the editor commands and the session's skills) and ``usage_update`` (its history's context fill)."""
        commands = await self.refresh_commands(session)
        await self.send(session, update_available_commands(commands))
        await self.send_usage(session)

    @staticmethod
    async def refresh_commands(session: AcpSession) -> list[AvailableCommand]:
        """The session's commands (editor commands and skills), and ``session.commands`` set to their names:
        done as the session opens, before its answer, so that ``/name`` is a command from its first prompt
        on, whether or not the client has seen the announcement yet."""
        skills = await asyncio.to_thread(skills_of, session.agent)
        commands = available_commands(skills)
        session.commands = {c.name for c in commands}
        return commands

    async def run(self, session: AcpSession, content: str | list[UserContent]) -> StopReason:
        agent = session.agent
        turn = TurnUpdates(
            session.working_dir,
            session.files.texts if session.files is not None else None,
            session.tool_call_ids,
        )
        if session.turn is not None:  # what the session's end closes if it has to abandon the turn
            session.turn.updates = turn
        last_reply = LastReply()
        try:  # the stream closed however this ends (a send that raised too): the agent's turn with it
            stream = cast(AsyncGenerator[AgentEvent, None], agent.stream(content))  # an async generator
            async with contextlib.aclosing(stream) as events:
                async for event in events:
                    last_reply.see(event)
                    for update in turn.see(event):
                        await self.send(session, update)
                    if isinstance(event, ApprovalRequest) and not event.decided:
                        self._ask(session, turn, event)
                    elif isinstance(event, CodeExecutionOutput | ToolOutput):
                        # a call ended: it may have written the plan file
                        await self.send_plan(session, turn.named(event.agent_id, event.corr_id))
                    elif isinstance(event, UsageUpdate) and event.agent_id == "main":
                        await self.send_usage(session, event)
        finally:
            await self.stop_asking(session)
        for update in turn.close_open("The turn ended before this call finished."):
            await self.send(session, update)
        await self.send_plan(session, turn.named())
        return self._stop_reason(session, turn, last_reply)

    def _stop_reason(self, session: AcpSession, turn: TurnUpdates, last_reply: LastReply) -> StopReason:
        """Why the turn ended: cancelled, the last reply cut short (its row of ``agent/reply_stops.py``:
        ``max_tokens``, ``refusal``), a bound ended it, or it answered."""
        if turn.cancelled or session.cancel_requested:
            return "cancelled"
        if last_reply.stop is not None:
            return last_reply.stop.stop_reason
        for kind in reversed(turn.error_kinds):
            if kind in STOP_REASON_OF_ERROR:
                return STOP_REASON_OF_ERROR[kind]
        return "end_turn"

    async def send_usage(self, session: AcpSession, usage: UsageUpdate | None = None) -> None:
        """``usage_update``: the context window's fill and the session's cost; after each request (``usage``:
        its event) and whenever else the context may have changed (with the session's last usage)."""
        if usage is not None:
            session.usage = usage
        await self.send(session, usage_update(session.usage, session.agent.context_usage()))

    async def send_plan(self, session: AcpSession, named: str = "") -> None:
        """The session's plan, when one of its calls (``named``: what they were given) wrote it."""
        written = session.files.take_written() if session.files is not None else None
        update = await asyncio.to_thread(session.plans.check, written, named)
        if update is not None:
            await self.send(session, update)

    async def send(self, session: AcpSession, update: SessionUpdate) -> None:
        """The one way a session's updates reach the client: none once its end abandoned its turn."""
        if not session.silenced:
            await self.client.session_update(session_id=session.id, update=update)

    def _ask(self, session: AcpSession, turn: TurnUpdates, request: ApprovalRequest) -> None:
        """Decide ``request``: at once in a mode that approves all, else by asking the client (in a
        task, so the turn's other events keep flowing while the client shows its dialog)."""
        if session.approve_all:
            request.resolve(Decision(True))
            return
        session.start(self._request_permission(session, turn, request), asking=True)

    async def _request_permission(
        self, session: AcpSession, turn: TurnUpdates, request: ApprovalRequest
    ) -> None:
        tool_call_id = turn.tool_call_id(request)
        view = turn.calls[tool_call_id].view
        decision = Decision(False, reason=CANCELLED_REASON)
        try:
            tool_call = ToolCallUpdate(
                tool_call_id=tool_call_id,
                title=view.title,
                kind=view.kind,
                status="pending",
                content=[*view.content, *effect_words(request)] or None,
                locations=view.locations or None,
                raw_input=view.raw_input,
            )
            session.waiting[tool_call_id] = view.content
            response = await ask_client(
                self.client.request_permission(
                    session_id=session.id,
                    tool_call=tool_call,
                    options=permission_options(request.tool_call, request.effect_class),
                ),
                decision_bound(session.config),
                "the permission request",
            )
            decision = decision_for(response, request.tool_call, request.effect_class)
        except asyncio.CancelledError:
            raise
        except ClientTimeout as exc:  # nobody approved it in time
            logger.warning("request_permission: %s", exc)
            decision = Decision(False, reason=str(exc))
        except Exception as exc:  # the client failed to answer or is gone: nobody approved it
            logger.warning("request_permission failed: %s", exc)
            decision = Decision(False, reason=f"the client did not answer the permission request ({exc})")
        finally:
            session.waiting.pop(tool_call_id, None)
            if not request.decided:
                request.resolve(decision)
                with contextlib.suppress(Exception):
                    for update in turn.decided(request, decision):
                        await asyncio.shield(self.send(session, update))

    async def note_unreadable(self, session: AcpSession) -> None:
        """A line the client sent could not be read: each call of ``session`` whose permission request waits
        says so, and that it still waits (the line answers nothing, cancels nothing)."""
        for tool_call_id, content in list(session.waiting.items()):
            await self.send(
                session, update_tool_call(tool_call_id, content=[*content, *note_content(UNREADABLE_NOTE)])
            )

    @staticmethod
    async def stop_asking(session: AcpSession) -> None:
        """Cancel the permission requests still waiting (their requests are rejected)."""
        tasks = list(session.asking)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def effect_words(request: ApprovalRequest) -> list[ContentToolCallContent]:
    """What the code does, in the words of the app's dialog and the headless refusal (``effects.describe``,
    ``ApprovalRequest.effects``): one text block, controls shown."""
    if not request.effects:
        return []
    return [tool_content(text_block(visible(f"It {request.effects}", multiline=False)))]


__all__ = ["TurnRunner", "effect_words"]
