"""Kernels left in a remote gateway: deleting those whose start was given up, and every kernel this
process still holds when it quits without stopping its agents (``release_remote_kernels``).

``remote.RemoteKernelConnection`` registers its kernels here (``LIVE``, ``STARTING``); nothing here
knows the connection beyond ``KernelConnection``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref

import aiohttp

from freeact_tui.execution.base import ExecutorError
from freeact_tui.execution.kernel_client import KernelConnection
from freeact_tui.execution.kernel_gateway import KernelGatewayProcess

logger = logging.getLogger(__name__)

DELETE_ATTEMPTS = 10

# Deletions of kernels whose start was given up (kept referenced until done).
ABANDONED: set[asyncio.Task[None]] = set()
# Connections whose kernel lives in a gateway, and kernel starts under way, for ``release_remote_kernels``.
LIVE: weakref.WeakSet[KernelConnection] = weakref.WeakSet()
STARTING: dict[asyncio.Task[str], KernelGatewayProcess] = {}


async def release_remote_kernels(limit: float = 3.0) -> int:
    """Delete every gateway kernel this process still holds, all at once, within ``limit`` seconds.

    For a process that ends without stopping its agents (the app's quick quit): local kernels end by
    their watchdogs once we are gone, a gateway's would run on (on Enterprise Gateway, a pod until
    culled). Returns how many kernels were asked to go.
    """
    conns = [c for c in list(LIVE) if c.kernel_id is not None and not c._closed]
    starting = list(STARTING.items())  # the gateway may have made these already: wait for their ids

    async def delete(gateway: KernelGatewayProcess, kernel_id: str) -> None:
        with contextlib.suppress(aiohttp.ClientError, TimeoutError, OSError):
            async with gateway.client_session(aiohttp.ClientTimeout(total=limit)) as session:
                async with session.delete(f"{gateway.base_url}/api/kernels/{kernel_id}"):
                    pass

    async def delete_started(post: asyncio.Task[str], gateway: KernelGatewayProcess) -> None:
        with contextlib.suppress(Exception):
            await delete(gateway, await asyncio.shield(post))

    jobs = [delete(c.gateway, c.kernel_id) for c in conns if c.kernel_id is not None]
    jobs += [delete_started(post, gateway) for post, gateway in starting]
    if jobs:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(limit):
                await asyncio.gather(*jobs)
    return len(jobs)


def delete_when_started(post: asyncio.Task[str], gateway: KernelGatewayProcess, wait: float) -> None:
    """Once ``post`` (a kernel start given up) returns the kernel's id, delete that kernel."""

    async def delete() -> None:
        try:
            async with asyncio.timeout(wait + 30):
                kernel_id = await post
        except (ExecutorError, aiohttp.ClientError, TimeoutError, KeyError, ValueError):
            return  # it never started
        async with gateway.client_session(aiohttp.ClientTimeout(total=5)) as session:
            for _ in range(DELETE_ATTEMPTS):
                with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                    async with session.delete(f"{gateway.base_url}/api/kernels/{kernel_id}") as resp:
                        if resp.status in (204, 404):
                            logger.info("deleted kernel %s: its start had been given up", kernel_id)
                            return
                await asyncio.sleep(0.5)

    task = asyncio.create_task(delete())
    ABANDONED.add(task)
    task.add_done_callback(ABANDONED.discard)
