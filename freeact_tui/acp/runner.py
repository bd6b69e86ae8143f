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
from typing import TYPE_CHECKING, cast

from freeact_tui.acp.handshake import early_answer
from freeact_tui.acp.stdio import LineTransport, guard_stdio, protocol_streams

if TYPE_CHECKING:
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
    except BaseException:
        await transport.close()
        raise
    if answer is not None and "result" in answer and first is not None:  # not a refused initialize
        await agent.initialize_from(first.get("params") or {})
    await _run(agent, transport)


async def _run(agent: FreeactAcpAgent, transport: LineTransport) -> None:
    from acp.agent.connection import AgentSideConnection
    from acp.interfaces import Agent as AcpAgent

    from freeact_tui.acp.dispatch import guarded

    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    for sig in (signal.SIGINT, signal.SIGTERM):
        if main is not None:
            loop.add_signal_handler(sig, main.cancel)
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
        try:
            await conn.listen()
        finally:
            await asyncio.shield(conn.close())
    except asyncio.CancelledError:
        logger.info("ACP server interrupted")
    finally:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(agent.shutdown())
        await transport.close()


__all__ = ["serve"]
