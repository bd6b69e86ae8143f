"""The executor an agent's settings describe, and starting one before the agent that owns it exists.

The app starts its kernel right after the trust decision, while the agent's own imports (pydantic-ai:
most of a second) are still loading; the agent then adopts it (``Agent(kernel_launch=…)``) and stops it
as one it started. So this module imports nothing of pydantic-ai, and the backend only when asked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from freeact_tui.mcp.gentools import gentools_root
from freeact_tui.timeline import mark

if TYPE_CHECKING:
    from freeact_tui.agent.settings import Settings
    from freeact_tui.events import KernelState
    from freeact_tui.execution.base import Executor


def new_executor(settings: Settings, ptc_servers: Mapping[str, Mapping[str, Any]] | None = None) -> Executor:
    """The executor ``settings`` describe (not started).

    Args:
        settings: The agent's settings.
        ptc_servers: The MCP servers code may call (see ``McpApis.ptc_servers``); None until generated.

    Raises:
        ExecutorError: As ``create_executor``.
    """
    from freeact_tui.execution import create_executor

    return create_executor(
        settings.execution,
        working_dir=settings.working_dir,
        images_dir=settings.images_dir,
        kernel_env=settings.kernel_env,
        # The generated MCP APIs (mcptools) and saved tools (gentools) share this root (the agent's
        # ``McpSetup`` generates into it): known from the settings alone, on no path, imported only as the
        # app checked or wrote it.
        generated_root=gentools_root(settings.working_dir, trusted=settings.project_trusted),
        mcp_servers=ptc_servers,
        docker_image=settings.docker_image,
        remote_url=settings.remote_url,
        remote_insecure=settings.remote_insecure,
        # Before trust, nothing of the folder is on the kernel's path: not even its own modules.
        import_working_dir=settings.project_trusted,
    )


class KernelLaunch:
    """An executor whose ``start()`` runs in a task, begun before the agent that adopts it.

    Whoever begins one stops it unless an agent adopted it (``adopted``): the agent then stops it.

    Args:
        executor: The executor to start (now, in a task).
    """

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self.adopted = False
        self.last: tuple[KernelState, str] | None = None
        """The last state it reported (an adopting agent reports it: it was not listening yet)."""
        executor.add_state_listener(self._seen)
        self.task: asyncio.Task[None] = asyncio.create_task(executor.start())

    @classmethod
    async def begin(cls, settings: Settings) -> KernelLaunch:
        """Load the backend of ``settings.execution`` (in a thread) and start the executor they describe.

        Raises:
            ExecutorError: As ``create_executor``.
        """
        from freeact_tui.execution import preload_backend

        mark("backend_import:start")
        await asyncio.to_thread(preload_backend, settings.execution)
        mark("backend_import:end")
        return cls(new_executor(settings))

    def _seen(self, state: KernelState, detail: str) -> None:
        self.last = (state, detail)

    async def stop(self) -> None:
        """Stop it, at whatever stage its start is (a launch no agent adopted)."""
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)
        await self.executor.stop()


__all__ = ["KernelLaunch", "new_executor"]
