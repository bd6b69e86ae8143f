"""A session's end, bounded: the one way ``session/close``, the end of stdin and a signal end a session.

1. Cancel: what ``session/cancel`` does (the turn is cancelled, the prompts waiting answer ``cancelled``,
   the questions to the client are withdrawn).
2. Wait at most ``CANCEL_BOUND`` for the running turn to end by itself (it normally does at once: the
   model request is cancelled, the kernel interrupted).
3. Force: a turn still running then (kernel code that ignores the interrupt, a model request or an MCP
   tool that never returns and swallows the cancel) is abandoned: its open tool calls are ended
   ``failed``, its prompt is answered ``cancelled`` now, and nothing it sends afterwards reaches the
   client (``AcpSession.silenced``).
4. Stop the agent within ``STOP_BOUND`` (its kernels, MCP servers and tool server: ``Agent.stop`` waits a
   bound for its own turn, then stops what holds it).

A prompt's turn runs through ``run_turn``, so that step 3 can answer it whatever the turn does; no
``await`` in ``acp/`` waits on a session's turn or agent otherwise (an architecture test holds it).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from acp.interfaces import Client
from acp.schema import StopReason

from freeact_tui.acp.open_turn import OpenTurn

if TYPE_CHECKING:
    from freeact_tui.acp.session import AcpSession
    from freeact_tui.agent.agent import Agent

logger = logging.getLogger(__name__)

CANCEL_BOUND = 3.0
"""Seconds a cancelled turn may take to end by itself before it is abandoned."""
STOP_BOUND = 15.0
"""Seconds stopping a session's agent (kernels, MCP servers) may take."""
SEND_BOUND = 2.0
"""Seconds each closing update may take to reach a client that does not read."""
ABANDONED_NOTE = "The session ended before this call finished; it was stopped."


def cancel_turns(session: AcpSession) -> None:
    """``session/cancel``: the running turn and every prompt waiting so far end ``cancelled``; the questions
    asked of the client (permissions, folder trust) are withdrawn."""
    session.cancel_requested = True
    session.queue.cancel()
    session.agent.cancel()
    for task in list(session.asking):
        task.cancel()


async def run_turn(session: AcpSession, work: Coroutine[Any, Any, StopReason]) -> StopReason:
    """Run ``work`` (a prompt's turn) as the session's open turn: its stop reason, or ``cancelled`` as soon
    as the session's end abandons it (``settle``)."""
    task = asyncio.create_task(work)
    turn = OpenTurn(task)
    task.add_done_callback(turn.retrieved)
    session.turn = turn
    abandoned = asyncio.create_task(turn.abandoned.wait())
    try:
        await asyncio.wait({task, abandoned}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:  # the connection closes under the prompt: the turn goes too
        task.cancel()
        raise
    finally:
        abandoned.cancel()
        if session.turn is turn:
            session.turn = None
    if turn.abandoned.is_set() or not task.done():
        return "cancelled"
    return task.result()


async def settle(session: AcpSession, client: Client) -> None:
    """Wait until the session's running turn (cancelled before) has ended: by itself within ``CANCEL_BOUND``,
    else it is abandoned (steps 2 and 3 of the module)."""
    bound = CANCEL_BOUND
    turn = session.turn
    if turn is None:
        return
    done, _ = await asyncio.wait({turn.task}, timeout=bound)
    if done:
        return
    logger.warning("the turn of session %s did not end within %g s of its cancel: abandoned", session.id, bound)
    session.silenced = True  # from now on the abandoned turn sends nothing
    closing = turn.updates.close_open(ABANDONED_NOTE) if turn.updates is not None else []
    for update in closing:
        try:
            await asyncio.wait_for(client.session_update(session_id=session.id, update=update), SEND_BOUND)
        except (TimeoutError, ConnectionError) as exc:
            logger.info("the end of a tool call of %s was not sent: %s", session.id, exc or type(exc).__name__)
            break
    turn.abandoned.set()  # after its calls' ends: the prompt's answer comes last
    turn.task.cancel()


async def stop_agent(agent: Agent) -> bool:
    """Step 4: stop ``agent`` within ``STOP_BOUND``; whether it stopped (else one line is logged: what it left runs
    until this process ends, whose children end with it)."""
    bound = STOP_BOUND
    try:
        await asyncio.wait_for(agent.stop(), bound)
    except TimeoutError:
        logger.warning(
            "stopping the agent of session %s took more than %g s: left to end with the process",
            agent.session_id,
            bound,
        )
        return False
    return True


async def end_session(session: AcpSession, client: Client) -> bool:
    """The whole end of ``session`` (steps 1 to 4), for a session no request waits on any more (the client is
    gone, or the process ends); whether its agent stopped."""
    cancel_turns(session)
    await settle(session, client)
    session.cancel_tasks()  # announcements not sent yet, questions: there is nobody to tell
    return await stop_agent(session.agent)


__all__ = [
    "CANCEL_BOUND",
    "STOP_BOUND",
    "OpenTurn",
    "cancel_turns",
    "end_session",
    "run_turn",
    "settle",
    "stop_agent",
]
