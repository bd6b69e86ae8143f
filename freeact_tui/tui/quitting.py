"""Quitting at once: the turn ends and the session is written; nothing waits for kernels to stop.

A graceful stop of every kernel (the main agent's, the warm subagent pool's) takes seconds. When
the process ends right after the app (the command line calls ``exit_now``), the children end
without us: the kernel gateway's watchdog kills its kernels when its owner is gone, MCP servers get
SIGTERM from ``die_with_parent`` and containers end when the owner lock frees (``execution/orphans.py``).
Kernels in a remote gateway have no such watchdog: they are deleted (one request each, all at once).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import TYPE_CHECKING, NoReturn

from freeact_tui import typeahead

if TYPE_CHECKING:
    from freeact_tui.agent.agent import Agent

TURN_LIMIT = 3.0
"""Seconds a cancelled turn may take to unwind (it records what it did) before we leave anyway."""


async def settle_for_exit(agent: Agent, *, limit: float = TURN_LIMIT) -> None:
    """Cancel a running turn, wait until its history is written, and flush the session to disk.

    Args:
        agent: The agent whose process is about to end; its kernels are left to their watchdogs.
        limit: The longest wait for the turn to unwind.
    """
    try:
        await asyncio.wait_for(agent.cancel_and_wait(), limit)
    except TimeoutError:
        logging.getLogger(__name__).warning("the cancelled turn did not end within %g s at exit", limit)
    session = agent.session
    if session is not None and session.exists():
        try:
            await asyncio.wait_for(asyncio.to_thread(session.sync), limit)
        except (OSError, TimeoutError) as exc:  # the messages are with the OS already
            logging.getLogger(__name__).warning("session not synced at exit: %s", exc)
    from freeact_tui.execution.gateway.remote import release_remote_kernels

    await release_remote_kernels(limit)


def exit_now(code: int = 0) -> NoReturn:
    """End the process without tearing down the interpreter (seconds for a large heap).

    Output and logs are flushed first; the children end by themselves (see the module docstring).
    """
    from freeact_tui.execution.isolation.protect import end_all_now

    end_all_now()  # an isolated kernel's placeholders in the folder go with it, not after us
    logging.shutdown()
    typeahead.restore()  # os._exit skips atexit: the terminal settings from before the app go back here
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
