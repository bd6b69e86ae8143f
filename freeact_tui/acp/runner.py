"""Run the ACP agent on this process's stdio until the client closes it (or a signal ends it).

``initialize`` is answered first (``handshake``), then the heavy modules (the SDK's schema, pydantic-ai,
the agent) and the command line's config load: only the standard library and the protocol's framing are
imported before it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from freeact_tui.acp.handshake import early_answer
from freeact_tui.acp.stdio import LineTransport, guard_stdio, protocol_streams

if TYPE_CHECKING:
    from acp.agent.connection import AgentSideConnection

    from freeact_tui.acp.server import ConfigLoader, FreeactAcpAgent

logger = logging.getLogger(__name__)


def _load(prepare: Callable[[], ConfigLoader]) -> FreeactAcpAgent:
    """The agent side, built once its modules are imported and the config is ready (in a thread)."""
    from freeact_tui.acp.server import FreeactAcpAgent

    return FreeactAcpAgent(prepare())


async def serve(prepare: Callable[[], ConfigLoader]) -> None:
    """Serve ACP on stdin/stdout; return once stdin closes, after every session's kernels have stopped.

    Args:
        prepare: checks the command line's config and returns the config for a session's working
            directory (the command line's options applied); it runs once ``initialize`` is answered,
            and what it raises ends the server.
    """
    proto_in, proto_out = guard_stdio()
    reader, writer = await protocol_streams(proto_in, proto_out)
    transport = LineTransport(reader, writer)
    try:
        # the import runs after the answer: in a thread beside it, building the SDK's models would hold
        # the GIL and delay the answer as much as importing first
        first = await transport.receive()
        answer = early_answer(first)
        if answer is not None:
            await transport.send(answer)
        else:
            transport.unread(first)
        agent = await asyncio.to_thread(_load, prepare)
        from freeact_tui.acp.legacy import upgrade

        transport.rewrite = upgrade  # older clients' methods, read as the current ones
        transport.on_unreadable = agent.unreadable_line
    except BaseException:
        await transport.close()
        raise
    if answer is not None and "result" in answer and first is not None:  # not a refused initialize
        await agent.initialize_from(first.get("params") or {})
    await _run(agent, transport)


SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals that end the server as the end of stdin does (a second one ends it at once)."""
ANSWER_BOUND = 2.0
"""Seconds the answers the sessions' ends owe (prompts ``cancelled``) may take to be written."""


async def _run(agent: FreeactAcpAgent, transport: LineTransport) -> None:
    from acp.agent.connection import AgentSideConnection
    from acp.interfaces import Agent as AcpAgent

    from freeact_tui.acp.dispatch import guarded

    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    ending = asyncio.Event()

    def on_signal() -> None:
        if ending.is_set() and main is not None:
            main.cancel()  # a second signal: no more waiting
        ending.set()

    for sig in SIGNALS:
        loop.add_signal_handler(sig, on_signal)
    try:
        # session/close, resume and fork are still marked unstable in the SDK; methods we do not
        # define stay -32601.
        conn = AgentSideConnection(
            cast(AcpAgent, agent), transport, listening=False, use_unstable_protocol=True
        )
        # every message reaches the router through the one guard (``dispatch``); the SDK's connection takes
        # its handler at construction only, so it is wrapped in place
        inner = conn._conn._handler  # noqa: SLF001
        conn._conn._handler = guarded(inner)  # noqa: SLF001
        listening = asyncio.ensure_future(conn.listen())
        try:
            await _until_end(listening, ending)
            # stdin closed or a signal came: every session ends (``session_end``, bounded) while the stream
            # is still open, so its running prompt is answered and its open tool calls are ended
            await agent.shutdown()
            await _answers_written(conn)
        finally:
            await asyncio.shield(conn.close())
            listening.cancel()
    except asyncio.CancelledError:
        logger.info("ACP server interrupted")
    finally:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(agent.shutdown())  # what opened meanwhile (nothing, normally)
        await transport.close()


async def _until_end(listening: asyncio.Future[Any], ending: asyncio.Event) -> None:
    """Serve until stdin closes (``listening`` ends) or ``ending`` is set (a signal). After a signal the
    reader goes on: a client's answer to a question still open is read until the connection closes."""
    signalled: asyncio.Future[Any] = asyncio.ensure_future(ending.wait())
    try:
        await asyncio.wait({listening, signalled}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        signalled.cancel()
    if ending.is_set():
        logger.info("ACP server ending on a signal")


async def _answers_written(conn: AgentSideConnection) -> None:
    """Wait (at most ``ANSWER_BOUND``) for the requests in flight, each answered by the end of its session,
    to write their answers before the connection closes."""
    supervisor = conn._conn._tasks  # noqa: SLF001 - the SDK keeps its request tasks there, nowhere else
    this = asyncio.current_task()
    pending = {t for t in supervisor._tasks if t is not this and not t.done()}  # noqa: SLF001
    if pending:
        await asyncio.wait(pending, timeout=ANSWER_BOUND)


__all__ = ["serve"]
