"""An agent's kernel: started in the background (or given), reported as it changes, stopped with the agent."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from freeact_tui.agent.runtime import Runtime
from freeact_tui.events import AgentEvent, KernelState, KernelStatus
from freeact_tui.execution.base import Executor, ExecutorError
from freeact_tui.mcp.gentools import gentools_root
from freeact_tui.mcp.setup import McpSetup
from freeact_tui.timeline import mark


class AgentKernel:
    """The executor of one agent.

    Args:
        runtime: the agent's runtime (settings; ``executor``: one already started, not stopped here).
        mcp: the agent's MCP servers (their generated APIs go on the kernel's path).
        publish: reports ``KernelStatus`` events.
    """

    def __init__(self, runtime: Runtime, mcp: McpSetup, publish: Callable[[AgentEvent], None]) -> None:
        self._runtime = runtime
        self._mcp = mcp
        self._publish = publish
        self.executor: Executor | None = runtime.executor
        self.owned = runtime.executor is None
        self.task: asyncio.Task[Executor] | None = None

    @property
    def state(self) -> KernelState:
        if self.executor is not None:
            return self.executor.state
        if self.task is not None and self.task.done() and self.task.exception():
            return "failed"
        return "starting" if self.task is not None else "stopped"

    def watch(self) -> None:
        """A given executor reports its state changes too."""
        if self.executor is not None:
            self.executor.add_state_listener(self._on_state)

    def start_soon(self) -> None:
        """Start the kernel in the background (once)."""
        if self.task is None and self.executor is None:
            self.task = asyncio.create_task(self._start())

    def new_executor(self) -> Executor:
        from freeact_tui.execution import create_executor

        s = self._runtime.settings
        return create_executor(
            s.execution,
            working_dir=s.working_dir,
            images_dir=s.images_dir,
            kernel_env=s.kernel_env,
            # mcptools and gentools share one root (a freeact project's .freeact/generated): one entry.
            extra_pythonpath=list(
                dict.fromkeys([*self._mcp.pythonpath(), gentools_root(s.working_dir, trusted=s.project_trusted)])
            ),
            mcp_servers=self._runtime.ptc_servers,
            docker_image=s.docker_image,
            remote_url=s.remote_url,
            remote_insecure=s.remote_insecure,
        )

    async def _start(self) -> Executor:
        from freeact_tui.execution import preload_backend

        # The backend's imports take seconds: off the event loop, so a UI draws and takes keys meanwhile.
        mark("backend_import:start")
        await asyncio.to_thread(preload_backend, self._runtime.settings.execution)
        mark("backend_import:end")
        executor = self.new_executor()
        executor.add_state_listener(self._on_state)  # it reports "starting", "ready", "failed"
        try:
            await executor.start()
        except BaseException as exc:
            if executor.state != "failed":  # cancelled, or failed before it could say so
                self._publish(KernelStatus("failed", detail=str(exc), agent_id=self._runtime.agent_id))
            await asyncio.shield(executor.stop())
            raise
        self.executor = executor
        return executor

    def _on_state(self, state: KernelState, detail: str) -> None:
        self._publish(KernelStatus(state, detail=detail, agent_id=self._runtime.agent_id))

    async def ensure(self) -> Executor:
        """The running executor, started now if it was not."""
        if self.executor is not None:
            return self.executor
        self.start_soon()
        assert self.task is not None
        try:
            return await asyncio.shield(self.task)
        except (ExecutorError, asyncio.CancelledError):
            raise
        except Exception as exc:
            raise ExecutorError(f"The kernel could not be started: {exc}") from exc

    async def stop(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
        if self.owned and self.executor is not None:
            try:
                await self.executor.stop()
            finally:
                self.executor = None


__all__ = ["AgentKernel"]
