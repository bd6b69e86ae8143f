"""Run the ACP agent on this process's stdio until the client closes it (or a signal ends it)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from typing import cast

from acp import run_agent
from acp.interfaces import Agent as AcpAgent

from freeact_tui.acp.server import ConfigLoader, FreeactAcpAgent
from freeact_tui.acp.stdio import LineTransport, guard_stdio, protocol_streams

logger = logging.getLogger(__name__)


async def serve(load_config: ConfigLoader) -> None:
    """Serve ACP on stdin/stdout; return once stdin closes, after every session's kernels have stopped.

    Args:
        load_config: the config for a session's working directory (the command line's options applied).
    """
    proto_in, proto_out = guard_stdio()
    reader, writer = await protocol_streams(proto_in, proto_out)
    transport = LineTransport(reader, writer)
    agent = FreeactAcpAgent(load_config)
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    for sig in (signal.SIGINT, signal.SIGTERM):
        if main is not None:
            loop.add_signal_handler(sig, main.cancel)
    try:
        # session/close is still marked unstable in the SDK; methods we do not define stay -32601.
        await run_agent(cast(AcpAgent, agent), transport, use_unstable_protocol=True)
    except asyncio.CancelledError:
        logger.info("ACP server interrupted")
    finally:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(agent.shutdown())
        await transport.close()


__all__ = ["serve"]
