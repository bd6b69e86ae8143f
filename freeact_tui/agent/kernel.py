"""An agent's kernel: started in the background (or given), reported as it changes, stopped with the agent."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from freeact_tui.agent.kernel_launch import KernelLaunch, new_executor
from freeact_tui.agent.runtime import McpApis, Runtime
from freeact_tui.events import AgentEvent, KernelState, KernelStatus
from freeact_tui.execution.base import Executor, ExecutorError
from freeact_tui.timeline import mark


class AgentKernel:
    """The executor of one agent.

    Args:
        runtime: the agent's runtime (settings; ``executor``: one already started, not stopped here).
        publish: reports ``KernelStatus`` events.
        apis: the MCP APIs the agent knows now (a new kernel's tool server serves their servers).
        launch: an executor being started for this agent (``KernelLaunch``): it is stopped here.
    """

    def __init__(
        self,
        runtime: Runtime,
        publish: Callable[[AgentEvent], None],
        apis: Callable[[], McpApis],
        launch: KernelLaunch | None = None,
    ) -> None:
        self._runtime = runtime
        self._apis = apis
        self._publish = publish
        self.executor: Executor | None = runtime.executor
        self.owned = runtime.executor is None
        self.task: asyncio.Task[Executor] | None = None
        self._starting: Executor | None = None  # created, its start not finished
        self._launch = launch
        self.on_fresh: Callable[[], None] = lambda: None
        """Called when the kernel starts or starts again (all its state is gone): the approval gate's
        ledger of what ran in it (``freeact_tui.effects.ledger``) forgets."""

    @property
    def state(self) -> KernelState:
        if self.executor is not None:
            return self.executor.state
        if self.task is not None and self.task.done() and self.task.exception():
            return "failed"
        if self._starting is not None and self._starting.state != "stopped":
            return self._starting.state
        return "starting" if self.task is not None else "stopped"

    def watch(self) -> None:
        """A given executor reports its state changes too."""
        if self.executor is not None:
            self.executor.add_state_listener(self._on_state)

    def start_soon(self) -> None:
        """Start the kernel in the background (once); an executor launched for this agent is adopted."""
        if self.task is None and self.executor is None:
            self.task = asyncio.create_task(self._start())

    def new_executor(self) -> Executor:
        return new_executor(self._runtime.settings, self._apis().ptc_servers)

    async def _start(self) -> Executor:
        launch, self._launch = self._launch, None
        if launch is None:
            from freeact_tui.execution import preload_backend

            # The backend's imports take seconds: off the event loop, so a UI draws and takes keys meanwhile.
            mark("backend_import:start")
            await asyncio.to_thread(preload_backend, self._runtime.settings.execution)
            mark("backend_import:end")
            executor = self.new_executor()
        else:
            launch.adopted = True
            executor = launch.executor
        self._starting = executor
        executor.add_state_listener(self._on_state)  # it reports "starting", "ready", "failed"
        if launch is not None and launch.last is not None:
            self._on_state(*launch.last)  # where it got to before we listened
        try:
            await (executor.start() if launch is None else launch.task)
        except BaseException as exc:
            if executor.state != "failed":  # cancelled, or failed before it could say so
                self._publish(KernelStatus("failed", detail=str(exc), agent_id=self._runtime.agent_id))
            await asyncio.shield(executor.stop())
            raise
        finally:
            self._starting = None
        self.executor = executor
        return executor

    def _on_state(self, state: KernelState, detail: str) -> None:
        if state in ("starting", "restarting"):
            self.on_fresh()
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

    @property
    def launched(self) -> bool:
        """An executor is being started for this agent (``start_soon`` adopts it)."""
        return self._launch is not None

    async def stop(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
        launch, self._launch = self._launch, None
        if launch is not None:  # never adopted (stopped before its start ran)
            await launch.stop()
        if self.owned and self.executor is not None:
            try:
                await self.executor.stop()
            finally:
                self.executor = None


__all__ = ["AgentKernel"]
