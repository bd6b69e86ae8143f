"""The agent: a code-action loop over pydantic-ai models, with approvals, persistence and cancellation.

``Agent.stream(prompt)`` runs one turn: the model streams thoughts and text, its tool calls are
approved and executed, their results go back to the model, until it answers without a tool call.
The turn runs in its own task and pushes events into a queue, so concurrent work (several tool
calls, subagents) merges into one ordered stream and ``cancel()`` can stop any phase at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pydantic_ai.messages import ModelMessage, UserContent
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from freeact_tui.agent import history as hist
from freeact_tui.agent.approvals import ApprovalGate
from freeact_tui.agent.checkpointing import Checkpointing
from freeact_tui.agent.models import resolve_model
from freeact_tui.agent.recorder import Recorder
from freeact_tui.agent.runtime import Runtime, Settings
from freeact_tui.agent.subagents import SubagentManager
from freeact_tui.agent.turn import TurnState
from freeact_tui.agent.turn_loop import TurnLoop
from freeact_tui.agent.usage import UsageMeter
from freeact_tui.agent.user_shell import UserShell
from freeact_tui.events import AgentEvent, KernelState, KernelStatus, Phase, UsageUpdate
from freeact_tui.execution.base import Executor, ExecutorError
from freeact_tui.execution.pool import ExecutorPool
from freeact_tui.mcp.discovery import DiscoveryMode
from freeact_tui.mcp.gentools import generated_root, gentools_root
from freeact_tui.mcp.setup import McpSetup
from freeact_tui.permissions import PermissionRules, rules_for
from freeact_tui.store.lock import SessionLocked
from freeact_tui.store.sessions import Session, SessionDamaged, new_session_id

if TYPE_CHECKING:
    from freeact_tui.config import ActionProtocolName, Config

_END = object()
_DEFAULTS = Settings()


class AgentBusy(RuntimeError):
    """``stream()`` was called while a turn is still running."""


class Agent(TurnLoop):
    """A code-action agent. Use as an async context manager, then iterate ``stream(prompt)``.

    Args:
        model: a pydantic-ai model or a ``provider:name`` string (``"test"`` for the offline test model).
        model_settings: pydantic-ai model settings (temperature, max_tokens, …).
        system_prompt: replaces the built-in system prompt.
        agent_id: ``"main"`` or a subagent id.
        session_id: resume this session (a UUID); ``None`` starts a new one.
        sessions_dir: where sessions are stored; ``None`` disables persistence.
        working_dir: the kernel's working directory (default: the current directory).
        execution_timeout: seconds a code action may run (approval waits excluded).
        approval_timeout: seconds to wait for a decision before rejecting; ``None`` waits forever.
        skip_permissions: approve every action without asking.
        permissions: permission rules; by default the user's rules file plus defaults.
        executor: an already started executor to use (not stopped by the agent).
        eager_kernel: start the kernel in ``start()`` (False: at the first code action).
        checkpoints: checkpoint the working directory before each action that can write (undo).
        action_protocol: ``tools``, ``text`` (code blocks in the reply are the actions) or ``auto``.

    The other keywords are the fields of ``Settings`` (defaults: those of ``Config``).
    """

    def __init__(
        self,
        model: str | Model,
        *,
        model_settings: ModelSettings | dict[str, Any] | None = None,
        system_prompt: str | None = None,
        agent_id: str = "main",
        session_id: str | None = None,
        sessions_dir: Path | None = None,
        working_dir: Path | None = None,
        mcp_servers: dict[str, Any] | None = None,
        kernel_env: dict[str, str] | None = None,
        execution: str = _DEFAULTS.execution,
        images_dir: Path | None = None,
        execution_timeout: float = _DEFAULTS.execution_timeout,
        model_idle_timeout: float = _DEFAULTS.model_idle_timeout,
        approval_timeout: float | None = _DEFAULTS.approval_timeout,
        enable_subagents: bool = _DEFAULTS.enable_subagents,
        max_subagents: int = _DEFAULTS.max_subagents,
        skip_permissions: bool = _DEFAULTS.skip_permissions,
        permissions: PermissionRules | None = None,
        executor: Executor | None = None,
        base_url: str | None = None,
        api_key_env: str | None = None,
        tool_result_inline_max_bytes: int = _DEFAULTS.tool_result_inline_max_bytes,
        tool_result_preview_chars: int = _DEFAULTS.tool_result_preview_chars,
        context_window: int | None = _DEFAULTS.context_window,
        compact_threshold: float = _DEFAULTS.compact_threshold,
        trim_result_chars: int = _DEFAULTS.trim_result_chars,
        parent_corr_id: str | None = None,
        subagent_pool_size: int = _DEFAULTS.subagent_pool_size,
        docker_image: str | None = _DEFAULTS.docker_image,
        remote_url: str | None = None,
        remote_insecure: bool = _DEFAULTS.remote_insecure,
        action_protocol: ActionProtocolName = _DEFAULTS.action_protocol,
        eager_kernel: bool = True,
        checkpoints: bool = _DEFAULTS.checkpoints,
    ) -> None:
        settings = Settings(
            model_settings=cast(ModelSettings | None, model_settings),
            system_prompt=system_prompt,
            sessions_dir=sessions_dir,
            working_dir=working_dir or Path.cwd(),
            mcp_servers=dict(mcp_servers or {}),
            kernel_env=dict(kernel_env or {}),
            execution=execution,
            images_dir=images_dir,
            execution_timeout=execution_timeout,
            model_idle_timeout=model_idle_timeout,
            approval_timeout=approval_timeout,
            enable_subagents=enable_subagents,
            max_subagents=max_subagents,
            skip_permissions=skip_permissions,
            base_url=base_url,
            api_key_env=api_key_env,
            tool_result_inline_max_bytes=tool_result_inline_max_bytes,
            tool_result_preview_chars=tool_result_preview_chars,
            context_window=context_window,
            compact_threshold=compact_threshold,
            trim_result_chars=trim_result_chars,
            subagent_pool_size=subagent_pool_size,
            docker_image=docker_image,
            remote_url=remote_url,
            remote_insecure=remote_insecure,
            checkpoints=checkpoints,
            action_protocol=action_protocol,
        )
        runtime = Runtime(
            model=resolve_model(model, base_url=base_url, api_key_env=api_key_env),
            settings=settings,
            session_id=session_id or new_session_id(),
            permissions=permissions
            or PermissionRules(None, skip_permissions=skip_permissions, working_dir=settings.working_dir),
            agent_id=agent_id,
            executor=executor,
            parent_corr_id=parent_corr_id,
        )
        self._setup(runtime, eager_kernel=eager_kernel)

    @classmethod
    def from_runtime(cls, runtime: Runtime, *, eager_kernel: bool = True) -> Agent:
        """An agent for an already resolved runtime (how subagents are made)."""
        agent = cls.__new__(cls)
        agent._setup(runtime, eager_kernel=eager_kernel)
        return agent

    @classmethod
    def from_config(cls, config: Config, **overrides: Any) -> Agent:
        """Build an agent from a validated ``Config``; keyword ``overrides`` win."""
        model = overrides.pop("model", config.model)
        if model is None:
            raise ValueError("no model configured")
        own = {
            k: overrides.pop(k)
            for k in ("agent_id", "session_id", "permissions", "executor", "parent_corr_id", "eager_kernel")
            if k in overrides
        }
        settings = Settings.from_config(config, **overrides)
        permissions = own.get("permissions")
        if permissions is None:
            permissions = rules_for(
                settings.working_dir,
                skip_permissions=settings.skip_permissions,
                trusted=settings.project_trusted,
            )
        return cls.from_runtime(
            Runtime(
                model=resolve_model(model, base_url=settings.base_url, api_key_env=settings.api_key_env),
                settings=settings,
                session_id=own.get("session_id") or new_session_id(),
                permissions=permissions,
                agent_id=own.get("agent_id", "main"),
                executor=own.get("executor"),
                parent_corr_id=own.get("parent_corr_id"),
            ),
            eager_kernel=own.get("eager_kernel", True),
        )

    def _setup(self, runtime: Runtime, *, eager_kernel: bool = True) -> None:
        s = runtime.settings
        self._eager_kernel = eager_kernel
        self.runtime = runtime
        self.agent_id = runtime.agent_id
        self.model = runtime.model
        self.model_settings = s.model_settings
        self.session_id = runtime.session_id
        self.working_dir = s.working_dir
        self.sessions_dir = s.sessions_dir
        self.execution_mode = s.execution
        self.execution_timeout = s.execution_timeout
        self.approval_timeout = s.approval_timeout
        self.skip_permissions = s.skip_permissions
        self.parent_corr_id = runtime.parent_corr_id
        self.enable_subagents = runtime.subagents_enabled
        self.mcp = McpSetup(
            s.mcp_servers if runtime.is_main else {},
            ptc_root=generated_root(s.working_dir, trusted=s.project_trusted),
            discovery=cast(DiscoveryMode, s.tool_discovery),
            working_dir=s.working_dir,
        )
        self.recorder = Recorder(
            s.sessions_dir,
            runtime.session_id,
            runtime.agent_id,
            inline_max_bytes=s.tool_result_inline_max_bytes,
            preview_chars=s.tool_result_preview_chars,
        )
        self.meter = UsageMeter(runtime.agent_id)
        if runtime.checkpointing is None:  # the main agent's; its subagents share it
            runtime.checkpointing = Checkpointing.create(
                s, self.recorder.session, lambda: self.recorder.history
            )
            runtime.checkpointing.notify = self.publish  # skipped files, failed checkpoints
        self.checkpointing = runtime.checkpointing
        self._subagents: SubagentManager | None = None
        self._executor = runtime.executor
        self._owns_executor = runtime.executor is None
        self._kernel_task: asyncio.Task[Executor] | None = None
        self._user_shell = UserShell()
        self._shell_running = False
        self._listeners: list[Callable[[AgentEvent], None]] = []
        self._queue: asyncio.Queue[Any] | None = None
        self._turn_task: asyncio.Task[None] | None = None
        self._turn: TurnState = TurnState()
        self._cancel_requested = False
        self._cancel_phase: Phase = Phase.IDLE
        self._steering: list[str] = []
        self._started = False
        self.gate = ApprovalGate(
            runtime.permissions,
            emit=self._emit,
            ids=self._ids,
            timeout=s.approval_timeout,
            set_phase=lambda corr, phase: self._turn.set_phase(corr, phase),
        )

    # -- properties ----------------------------------------------------------------------------

    @property
    def history(self) -> list[ModelMessage]:
        return self.recorder.history

    @history.setter
    def history(self, messages: list[ModelMessage]) -> None:
        self.recorder.history = messages

    @property
    def permissions(self) -> PermissionRules:
        """The rules that decide actions at once (and that remembered decisions extend)."""
        return self.gate.permissions

    @permissions.setter
    def permissions(self, rules: PermissionRules) -> None:
        self.runtime.permissions = rules
        self.gate.permissions = rules

    @property
    def load_damage(self) -> SessionDamaged | None:
        return self.recorder.load_damage

    @property
    def model_name(self) -> str:
        return self.model.model_name

    @property
    def busy(self) -> bool:
        return self._turn_task is not None and not self._turn_task.done()

    @property
    def phase(self) -> Phase:
        """What the running turn is doing (the most advanced phase of its calls); idle between turns."""
        return self._turn.phase if self.busy else Phase.IDLE

    @property
    def kernel_state(self) -> KernelState:
        if self._executor is not None:
            return self._executor.state
        if self._kernel_task is not None and self._kernel_task.done() and self._kernel_task.exception():
            return "failed"
        return "starting" if self._kernel_task is not None else "stopped"

    @property
    def usage(self) -> UsageUpdate:
        return self.meter.totals

    @property
    def session_locked(self) -> SessionLocked | None:
        """Another process writes this session: its history is shown, but no turn can run."""
        return self.recorder.locked

    @property
    def session(self) -> Session | None:
        return self.recorder.session

    def subscribe(self, callback: Callable[[AgentEvent], None]) -> None:
        """Receive status events (KernelStatus, UsageUpdate, SubagentStatus) while no turn streams them."""
        self._listeners.append(callback)

    def publish(self, event: AgentEvent) -> None:
        """A status event goes to the running turn's stream, or else to the listeners: once, never both."""
        if self._queue is not None:
            self._queue.put_nowait(event)
            return
        for listener in list(self._listeners):
            listener(event)

    def add_usage(self, usage: UsageUpdate) -> None:
        """Count tokens (this agent's, or a finished subagent's) into the session totals and report them."""
        self.publish(self.meter.add(usage))

    # -- lifecycle -------------------------------------------------------------------------------

    async def __aenter__(self) -> Agent:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        """Load the session's history and start the kernel in the background."""
        if self._started:
            return
        self._started = True
        self.recorder.load()
        if self.recorder.rewind_note and self.runtime.is_main:
            self.checkpointing.tell_model(self.recorder.rewind_note)
        dangling = hist.unanswered_calls(self.history)
        if dangling and self.load_damage is None and self.recorder.locked is None:
            # A crash mid-turn left calls unanswered: answer them so the next request is valid.
            self.recorder.record(hist.interrupted_returns(dangling, {}))
        self.mcp.start()
        if self._executor is not None:
            self._executor.add_state_listener(self._on_kernel_state)
        elif self._eager_kernel:
            self._kernel_task = asyncio.create_task(self._start_executor())
        if self.enable_subagents:
            pool = ExecutorPool(self._new_executor, self.runtime.settings.subagent_pool_size)
            self._subagents = SubagentManager(
                self.runtime,
                factory=Agent.from_runtime,
                publish=self.publish,
                add_usage=self.add_usage,
                overflow=self.recorder.overflow,
                session=self.recorder.session,
                pool=pool,
            )
            if self._kernel_task is not None:  # warm subagent kernels only once ours is up
                self._kernel_task.add_done_callback(lambda _: pool.fill())
            elif self._eager_kernel:
                pool.fill()

    async def stop(self) -> None:
        """Cancel a running turn and stop the kernel (if this agent started it)."""
        if self.busy:
            self.cancel()
            assert self._turn_task is not None
            await asyncio.gather(self._turn_task, return_exceptions=True)
        if self._kernel_task is not None and not self._kernel_task.done():
            self._kernel_task.cancel()
            await asyncio.gather(self._kernel_task, return_exceptions=True)
        await self.mcp.stop()
        if self._subagents is not None:
            await self._subagents.pool.stop()
            self._subagents = None
        if self._owns_executor and self._executor is not None:
            try:
                await self._executor.stop()
            finally:
                self._executor = None
        if self.runtime.is_main:
            await self.checkpointing.close()  # a background packing run of the checkpoint store
        self.recorder.close()
        self._started = False

    def _new_executor(self) -> Executor:
        from freeact_tui.execution import create_executor

        s = self.runtime.settings
        return create_executor(
            s.execution,
            working_dir=s.working_dir,
            images_dir=s.images_dir,
            kernel_env=s.kernel_env,
            # mcptools and gentools share one root (a freeact project's .freeact/generated): one entry.
            extra_pythonpath=list(dict.fromkeys([*self.mcp.pythonpath(), gentools_root(s.working_dir, trusted=s.project_trusted)])),
            mcp_servers=self.runtime.ptc_servers,
            docker_image=s.docker_image,
            remote_url=s.remote_url,
            remote_insecure=s.remote_insecure,
        )

    async def _start_executor(self) -> Executor:
        from freeact_tui.execution import preload_backend

        # The backend's imports take seconds: off the event loop, so a UI draws and takes keys meanwhile.
        await asyncio.to_thread(preload_backend, self.runtime.settings.execution)
        executor = self._new_executor()
        executor.add_state_listener(self._on_kernel_state)  # it reports "starting", "ready", "failed"
        try:
            await executor.start()
        except BaseException as exc:
            if executor.state != "failed":  # cancelled, or failed before it could say so
                self.publish(KernelStatus("failed", detail=str(exc), agent_id=self.agent_id))
            await asyncio.shield(executor.stop())
            raise
        self._executor = executor
        return executor

    def _on_kernel_state(self, state: KernelState, detail: str) -> None:
        self.publish(KernelStatus(state, detail=detail, agent_id=self.agent_id))

    async def _ensure_executor(self) -> Executor:
        if self._executor is not None:
            return self._executor
        if self._kernel_task is None:
            self._kernel_task = asyncio.create_task(self._start_executor())
        try:
            return await asyncio.shield(self._kernel_task)
        except (ExecutorError, asyncio.CancelledError):
            raise
        except Exception as exc:
            raise ExecutorError(f"The kernel could not be started: {exc}") from exc

    async def restart_kernel(self) -> None:
        """Restart the kernel (after a rewind): all its state is lost; a kernel not started stays so."""
        if self._executor is not None:
            await self._executor.reset()

    # -- turns ----------------------------------------------------------------------------------

    def cancel(self) -> None:
        """Stop the running turn at once (model streaming, approval wait or execution), or the user's
        own running ``!command`` (its kernel is interrupted)."""
        self._user_shell.interrupt()
        if self._turn_task is not None and not self._turn_task.done():
            self._cancel_requested = True
            self._cancel_phase = self._turn.phase  # unwinding clears the calls' phases
            self._turn_task.cancel()

    async def cancel_and_wait(self) -> None:
        """Cancel a running turn and wait until it has unwound (what it did is in the history)."""
        task = self._turn_task
        if task is not None and not task.done():
            self.cancel()
            await asyncio.gather(task, return_exceptions=True)

    def steer(self, text: str) -> bool:
        """Send ``text`` into the running turn: the model gets it before its next request (after the
        current tool calls). Returns False when no turn runs. What a turn that ends first did not take
        is returned by ``take_steering()``."""
        if not self.busy:
            return False
        self._steering.append(text)
        return True

    def take_steering(self) -> list[str]:
        """Messages given to ``steer()`` that the turn ended without sending (cleared)."""
        left, self._steering = self._steering, []
        return left

    async def stream(
        self, prompt: str | Sequence[UserContent], max_turns: int | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Run one turn and yield its events.

        Args:
            prompt: the user's message (text or multimodal content).
            max_turns: the most model requests this turn may make.

        Raises:
            AgentBusy: a turn is already running.
        """
        if self.busy or self._shell_running:
            raise AgentBusy("a turn is already running")
        if not self._started:
            await self.start()
        context = self._user_shell.take_context()
        if context and isinstance(prompt, str):
            prompt = f"{context}\n\n{prompt}"
        elif context:
            prompt = [context, *prompt]
        if self.runtime.is_main:
            prompt = self.checkpointing.take_note(prompt)  # after an undo or a rewind
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self._queue = queue
        self._cancel_requested = False
        self._steering = []
        self._turn = TurnState()
        task = asyncio.create_task(self._run_turn(prompt, max_turns))
        self._turn_task = task
        try:
            while True:
                item = await queue.get()
                if item is _END:
                    break
                yield item
        finally:
            if not task.done():  # the consumer stopped early: stop the turn too
                self.cancel()
                await asyncio.gather(task, return_exceptions=True)
            self._queue = None

    async def run_user_shell(self, command: str) -> AsyncIterator[AgentEvent]:
        """Run the user's own shell command in the kernel at once (no approval) and yield its output.

        The command and its output are put before the next prompt, so the model sees what the user saw.

        Raises:
            AgentBusy: a turn or another command is running.
            ExecutorError: the kernel could not be started.
        """
        if self.busy or self._shell_running:
            raise AgentBusy("a turn is already running")
        if not self._started:
            await self.start()
        self._shell_running = True
        try:
            executor = await self._ensure_executor()
            timeout = self.runtime.settings.execution_timeout
            async for event in self._user_shell.run(executor, command, agent_id=self.agent_id, limit=timeout):
                yield event
        finally:
            self._shell_running = False

    def _emit(self, event: AgentEvent) -> None:
        if self._queue is not None:
            self._queue.put_nowait(event)

    def _end_stream(self) -> None:
        if self._queue is not None:
            self._queue.put_nowait(_END)


__all__ = ["Agent", "AgentBusy"]
