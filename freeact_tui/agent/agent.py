"""The agent: a code-action loop over pydantic-ai models, with approvals, persistence and cancellation.

``Agent.stream(prompt)`` runs one turn (``turn/loop.py``): the model streams thoughts and text, the
reply policy decides what the reply leads to (``policy/reply.py``), its actions are approved and
run, their results go back to the model, until the reply is the answer. The turn runs in its own
task and puts its events into the agent's one event channel (``channel.py``), so concurrent work
(several tool calls, subagents) merges into one ordered stream and ``cancel()`` stops any phase at once.

The agent is composed once, in ``_setup``: recorder, kernel, approval gate, context keeper, reply
policy, the tools offered; each turn is a ``Turn`` built from these parts.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast, overload

from pydantic_ai.messages import ModelMessage, UserContent
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from freeact_tui.actions.dispatch import Dispatcher
from freeact_tui.actions.ports import EventPorts, TurnPorts
from freeact_tui.agent import history as hist
from freeact_tui.agent.approvals import ApprovalGate
from freeact_tui.agent.channel import EventChannel
from freeact_tui.agent.context.keeper import ContextKeeper
from freeact_tui.agent.context.window import ContextBreakdown
from freeact_tui.agent.kernel import AgentKernel
from freeact_tui.agent.kernel_launch import KernelLaunch
from freeact_tui.agent.models import choose_protocol, resolve_model
from freeact_tui.agent.offered_tools import OfferedTools
from freeact_tui.agent.policy.reply import reply_policy
from freeact_tui.agent.recorder import Recorder
from freeact_tui.agent.runtime import AgentRole, McpApis, Runtime
from freeact_tui.agent.settings import Settings
from freeact_tui.agent.subagents import SubagentManager
from freeact_tui.agent.turn.budget import RequestBudget
from freeact_tui.agent.turn.call_ids import CallIds
from freeact_tui.agent.turn.dispatcher import turn_dispatcher
from freeact_tui.agent.turn.loop import Turn
from freeact_tui.agent.turn.model_step import ModelStep
from freeact_tui.agent.turn.opening import TurnOpening
from freeact_tui.agent.turn.state import TurnError, TurnState
from freeact_tui.agent.usage import UsageMeter
from freeact_tui.agent.user_shell import UserShell
from freeact_tui.checkpoints.checkpointing import Checkpointing
from freeact_tui.checkpoints.model_notes import put_before
from freeact_tui.events import AgentEvent, Compacted, ContextUpdate, KernelState, Phase, UsageUpdate
from freeact_tui.execution.base import Executor, ExecutorError
from freeact_tui.mcp.discovery import DiscoveryMode
from freeact_tui.mcp.gentools import generated_root
from freeact_tui.mcp.setup import McpSetup
from freeact_tui.permissions.rules import PermissionRules, rules_for
from freeact_tui.project.config import ActionProtocolName
from freeact_tui.store.lock import SessionLocked
from freeact_tui.store.sessions import Session, SessionDamaged, new_session_id

if TYPE_CHECKING:
    from freeact_tui.project.config import Config


class AgentBusy(RuntimeError):
    """``stream()`` was called while a turn is still running."""


T = TypeVar("T")

logger = logging.getLogger(__name__)

TURN_END_GRACE = 3.0
"""Seconds ``Agent.stop`` waits for a cancelled turn to unwind, before and after stopping what runs under it."""


class SettingView(Generic[T]):
    """``runtime.settings.<name>`` (or ``runtime.<name>`` with ``of_runtime``) of the owning agent: a
    read-only view of a setting as an attribute (``agent.working_dir``); the runtime is the one place
    the settings live, so nothing is copied that could drift.

    Args:
        name: The field of ``Settings`` (or of ``Runtime``) to read.
        of_runtime: Read the runtime's own field instead of one of its settings.
    """

    def __init__(self, name: str, *, of_runtime: bool = False) -> None:
        self.name = name
        self.of_runtime = of_runtime

    @overload
    def __get__(self, agent: None, owner: type[Any]) -> SettingView[T]: ...
    @overload
    def __get__(self, agent: object, owner: type[Any]) -> T: ...
    def __get__(self, agent: object | None, owner: type[Any]) -> SettingView[T] | T:
        if agent is None:
            return self
        runtime = agent.runtime  # type: ignore[attr-defined]
        value: T = getattr(runtime if self.of_runtime else runtime.settings, self.name)
        return value


class Agent:
    """A code-action agent. Use as an async context manager, then iterate ``stream(prompt)``.

    Args:
        model: a pydantic-ai model or a ``provider:name`` string (``"test"`` for the offline test model).
        settings: the agent's ``Settings`` (default: ``Config``'s defaults).
        **overrides: fields of ``Settings`` by name (``working_dir=…``, ``action_protocol="auto"``,
            ``checkpoint_max_file_bytes=…``), and what is per agent: ``agent_id`` (``"main"`` or a
            subagent id), ``session_id`` (resume this session, a UUID; ``None`` starts a new one),
            ``permissions`` (default: none but the defaults, or all with ``skip_permissions``),
            ``executor`` (an already started executor, not stopped by the agent), ``kernel_launch`` (a
            ``KernelLaunch``: an executor being started for this agent, stopped with it), ``parent_corr_id``,
            ``eager_kernel`` (start the kernel in ``start()``; False: at the first code action),
            ``file_access`` (a ``FileAccess``: the file tools read and write text files in the working
            directory through it, e.g. an editor's buffers).

    Raises:
        TypeError: a keyword is neither a ``Settings`` field nor one of the per-agent ones.
    """

    # Read-only views of ``runtime.settings`` (freeact's attribute names).
    model_settings: SettingView[ModelSettings | None] = SettingView("model_settings")
    working_dir: SettingView[Path] = SettingView("working_dir")
    sessions_dir: SettingView[Path | None] = SettingView("sessions_dir")
    execution_mode: SettingView[str] = SettingView("execution")
    execution_timeout: SettingView[float] = SettingView("execution_timeout")
    approval_timeout: SettingView[float | None] = SettingView("approval_timeout")
    skip_permissions: SettingView[bool] = SettingView("skip_permissions")
    parent_corr_id: SettingView[str | None] = SettingView("parent_corr_id", of_runtime=True)

    def __init__(self, model: str | Model, settings: Settings | None = None, **overrides: Any) -> None:
        runtime, own = resolve_runtime(model, settings, overrides)
        self._setup(runtime, eager_kernel=own.get("eager_kernel", True), launch=own.get("kernel_launch"))

    @classmethod
    def from_runtime(cls, runtime: Runtime, *, eager_kernel: bool = True) -> Agent:
        """An agent for an already resolved runtime (how subagents are made)."""
        agent = cls.__new__(cls)
        agent._setup(runtime, eager_kernel=eager_kernel)
        return agent

    @classmethod
    def from_config(cls, config: Config, **overrides: Any) -> Agent:
        """Build an agent from a validated ``Config``; keyword ``overrides`` win."""
        model, settings, own = config_arguments(config, overrides)
        return cls(model, settings, **own)

    def _setup(
        self, runtime: Runtime, *, eager_kernel: bool = True, launch: KernelLaunch | None = None
    ) -> None:
        s = runtime.settings
        self._eager_kernel = eager_kernel
        self.apis = runtime.apis
        """The MCP APIs this agent knows: its runtime's, then what each turn's opening learned."""
        self.agent_id = runtime.agent_id
        self.model = runtime.model
        self.session_id = runtime.session_id
        self.enable_subagents = runtime.subagents_enabled
        self.events = EventChannel()
        self.mcp = McpSetup(
            s.mcp_servers if runtime.role.connects_mcp_servers else {},
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
        checkpointing = runtime.checkpointing
        if checkpointing is None:  # the main agent's; its subagents share it
            checkpointing = Checkpointing.create(s, self.recorder.session, lambda: self.recorder.history)
            checkpointing.notify = self.publish  # skipped files, failed checkpoints
            runtime = replace(runtime, checkpointing=checkpointing)
        self.runtime = runtime
        self.checkpointing = checkpointing
        self.kernel = AgentKernel(runtime, self.publish, self._apis, launch)
        # ``__init__`` chose a protocol for "default"; a runtime built elsewhere gets the tools default.
        # each turn lowers the bound to what is left of max_model_requests (``Turn``): a fault loop ends "stalled"
        self.policy = reply_policy(
            choose_protocol(s.action_protocol, runtime.model),
            s.max_steps_without_progress,
            s.max_failing_steps,
            s.max_steps_of_one_shape,
        )
        self.tools = OfferedTools(self.mcp, runtime.subagents_enabled, self.policy)
        self._state = TurnState()  # the running turn's; reset for each turn
        events = EventPorts(emit=self.events.put, ids=self._ids, set_phase=self._state.set_phase)
        self.gate = ApprovalGate(
            runtime.permissions, events, timeout=s.approval_timeout, working_dir=s.working_dir
        )
        self.kernel.on_fresh = self.gate.kernel_restarted  # what ran in the old kernel is gone
        self.ports = TurnPorts(
            emit=events.emit,
            ids=events.ids,
            set_phase=events.set_phase,
            ask=self.gate.ask,
            executor=self._turn_executor,
            overflow=self.recorder.overflow,
        )
        self.opening = TurnOpening(runtime, self.recorder, self.mcp, events)
        self.context = ContextKeeper(
            runtime,
            self.recorder,
            publish=self.publish,
            add_usage=self.add_usage,
            tools=self.tools.definitions,
            system_prompt=self._system_prompt,
            busy=lambda: self.busy,
        )
        self._subagents: SubagentManager | None = None
        self._user_shell = UserShell()
        self._shell_running = False
        self._turn: Turn | None = None
        self._turn_task: asyncio.Task[None] | None = None
        self._call_ids = CallIds()
        """The tool call ids this session has used: each call of a reply gets one of its own."""
        self._opening = False
        """``stream()`` is starting the agent: its turn does not exist yet."""
        self._cancel_early = False
        """``cancel()`` came while ``stream()`` started the agent: the turn is cancelled once it exists."""
        self._started = False

    def _apis(self) -> McpApis:
        return self.apis

    def _system_prompt(self) -> str:
        return self.opening.system_prompt(self.apis)

    async def _open_turn(self, prompt: str | Sequence[UserContent], added: int) -> None:
        """Open a turn, and keep what it learned of the MCP servers (for the kernel and the subagents)."""
        self.apis = await self.opening(self.apis, prompt, added)

    def _subagent_runtime(self, sub_id: str, executor: Executor, corr_id: str) -> Runtime:
        """A subagent's runtime, from this agent as it is now (its rules, the MCP APIs it learned)."""
        return self.runtime.for_subagent(
            sub_id, executor, corr_id, permissions=self.permissions, apis=self.apis, checkpointing=self.checkpointing
        )

    def _ids(self, corr_id: str = "") -> dict[str, Any]:
        return {"agent_id": self.agent_id, "corr_id": corr_id, "parent_corr_id": self.runtime.parent_corr_id}

    # -- properties ----------------------------------------------------------------------------

    @property
    def history(self) -> list[ModelMessage]:
        return self.recorder.history

    @history.setter
    def history(self, messages: list[ModelMessage]) -> None:
        self.recorder.history = messages
        self._call_ids = CallIds()  # another history: its ids are read again

    @property
    def permissions(self) -> PermissionRules:
        """The rules that decide actions at once (and that remembered decisions extend)."""
        return self.gate.permissions

    @permissions.setter
    def permissions(self, rules: PermissionRules) -> None:
        self.runtime = replace(self.runtime, permissions=rules)
        self.gate.permissions = rules

    @property
    def load_damage(self) -> SessionDamaged | None:
        return self.recorder.load_damage

    @property
    def model_name(self) -> str:
        return self.model.model_name

    @property
    def action_protocol(self) -> ActionProtocolName:
        """How the model acts: ``tools``, ``text`` or ``auto`` (as chosen for ``default``)."""
        return self.policy.name

    @property
    def busy(self) -> bool:
        return self._turn_task is not None and not self._turn_task.done()

    @property
    def phase(self) -> Phase:
        """What the running turn is doing (the most advanced phase of its calls); idle between turns."""
        return self._state.phase if self.busy else Phase.IDLE

    @property
    def kernel_state(self) -> KernelState:
        return self.kernel.state

    @property
    def readings_lost(self) -> str | None:
        """Why readings of code no longer vouch for it in this agent's kernel (``None``: they do): earlier code
        did what no reading follows, until the kernel starts again (``freeact_tui.effects.ledger``)."""
        return self.gate.kernel.lost

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
        """Receive the events put while no turn streams them (``channel.py``): kernel, usage, subagent status."""
        self.events.subscribe(callback)

    def publish(self, event: AgentEvent) -> None:
        """An event goes to the running turn's stream, or else to the listeners: once, never both."""
        self.events.put(event)

    def add_usage(self, usage: UsageUpdate) -> None:
        """Count tokens (this agent's, or a finished subagent's) into the session totals and report them."""
        self.publish(self.meter.add(usage))

    # -- context (``context/keeper.py``) ----------------------------------------------------------

    @property
    def transcript(self) -> list[ModelMessage]:
        """Every message of the session, compaction records included (the history the model sees is shorter)."""
        return self.context.transcript

    @property
    def context_window(self) -> tuple[int, str]:
        """The model's window in tokens and where the figure comes from."""
        return self.context.context_window

    def prepared_history(self) -> list[ModelMessage]:
        """The history as the next request sends it (trimmed, adjacent requests merged)."""
        return self.context.prepared_history()

    def context_usage(self) -> ContextUpdate:
        """How full the window is: the provider's count of the last answer plus estimates of what came after."""
        return self.context.context_usage()

    def context_breakdown(self) -> ContextBreakdown:
        """Estimated tokens of the next request by kind: system prompt, tools, history, tool results, images."""
        return self.context.context_breakdown()

    async def compact(self, focus: str | None = None) -> Compacted | None:
        """Summarise the older turns now (``/compact``); ``None`` when there is too little to compact.

        Raises:
            CompactionError: the model could not summarise (the history is unchanged).
        """
        return await self.context.compact(focus)

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
        # The whole history is read and checked off the event loop: a UI draws meanwhile (a resumed
        # log shows its last turns from the file's end first, ``tui/replay_tail.py``).
        await asyncio.to_thread(self._load_history)
        self.policy.resume(self.history)  # an auto session that had switched to text stays in text
        if self.recorder.rewind_note and self.runtime.role.takes_checkpoint_notes:
            self.checkpointing.notes.tell(self.recorder.rewind_note)
        dangling = hist.unanswered_calls(self.history)
        if dangling and self.load_damage is None and self.recorder.locked is None:
            # A crash mid-turn left calls unanswered: answer them so the next request is valid.
            self.recorder.record(hist.interrupted_returns(dangling, {}))
        self.mcp.start()
        if self.kernel.executor is not None:
            self.kernel.watch()
        elif self._eager_kernel or self.kernel.launched:
            self.kernel.start_soon()
        if self.enable_subagents:
            self._subagents = SubagentManager.started(
                self.runtime,
                derive=self._subagent_runtime,
                new_executor=self.kernel.new_executor,
                parent_kernel=self.kernel.task,  # warm subagent kernels only once ours is up
                eager=self._eager_kernel,
                factory=Agent.from_runtime,
                publish=self.publish,
                add_usage=self.add_usage,
                overflow=self.recorder.overflow,
                session=self.recorder.session,
            )

    def _load_history(self) -> None:
        """The session's history and the usage totals of its past responses (every message: in a thread)."""
        self.recorder.load()
        self.meter.restore(self.recorder.past_responses(subagents=self.runtime.role.counts_subagent_usage))

    async def stop(self) -> None:
        """Cancel a running turn and stop the kernel (if this agent started it).

        The turn gets ``TURN_END_GRACE`` to unwind; one that ignores its cancel (a model request or a tool
        that never returns) does not hold the stop: the MCP servers and the kernel under it are stopped
        anyway, which frees a turn stuck in them, and it gets the grace once more before the session file
        is closed."""
        await self.cancel_and_wait(TURN_END_GRACE)
        await self.mcp.stop()
        if self._subagents is not None:
            await self._subagents.pool.stop()
            self._subagents = None
        await self.kernel.stop()
        await self.cancel_and_wait(TURN_END_GRACE)
        if self.runtime.role.owns_checkpoints:
            await self.checkpointing.close()  # a background packing run of the checkpoint store
        await self.recorder.flushed()
        self.recorder.close()
        self._started = False

    async def _turn_executor(self) -> Executor:
        try:
            return await self.kernel.ensure()
        except ExecutorError as exc:
            raise TurnError("kernel", str(exc)) from exc

    async def restart_kernel(self) -> None:
        """Restart the kernel (after a rewind): all its state is lost; a kernel not started stays so."""
        if self.kernel.executor is not None:
            await self.kernel.executor.reset()

    # -- turns ----------------------------------------------------------------------------------

    def cancel(self) -> None:
        """Stop the running turn at once (model streaming, approval wait or execution), or the user's
        own running ``!command`` (its kernel is interrupted)."""
        self._user_shell.interrupt()
        self._cancel_early = self._opening
        if self._turn is not None and self._turn_task is not None and not self._turn_task.done():
            self._turn.cancel(self._turn_task)

    async def cancel_and_wait(self, limit: float | None = None) -> None:
        """Cancel a running turn and wait until it has unwound (what it did is in the history), or at most
        ``limit`` seconds (then it is left running, logged)."""
        task = self._turn_task
        if task is not None and not task.done():
            self.cancel()
            await asyncio.wait({task}, timeout=limit)
            if not task.done():
                logger.warning("the turn of %s did not end within %g s of its cancel", self.session_id, limit)
            elif not task.cancelled():
                task.exception()  # retrieved: ``_turn_over`` reported how it ended

    def record_notice(self, title: str, text: str) -> None:
        """Keep a notice a UI showed about this session (an undo) in its file, for a resumed log to show
        it where it happened; the model never sees it."""
        from freeact_tui.store.event_record import notice_record

        self.recorder.record_event(notice_record(title, text))

    def steer(self, text: str) -> bool:
        """Send ``text`` into the running turn: the model gets it before its next request (after the
        current tool calls). Returns False when no turn runs. What a turn that ends first did not take
        is returned by ``take_steering()``."""
        if not self.busy or self._turn is None:
            return False
        self._turn.steering.append(text)
        return True

    def take_steering(self) -> list[str]:
        """Messages given to ``steer()`` that the turn ended without sending (cleared)."""
        if self._turn is None:
            return []
        left, self._turn.steering = self._turn.steering, []
        return left

    def _dispatcher(self, budget: RequestBudget) -> Dispatcher:
        return turn_dispatcher(
            self.ports,
            self.runtime,
            self.mcp,
            self.checkpointing,
            self._subagents,
            self.events.put,
            self._apis,
            budget,
        )

    def _new_turn(self, prompt: str | Sequence[UserContent], max_turns: int | None, added: int = 0) -> Turn:
        self._state.reset()
        self.gate.kernel.settle()  # what an earlier turn approved has run, or never will
        budget = RequestBudget(
            max_turns if max_turns is not None else self.runtime.settings.max_model_requests
        )
        return Turn(
            self.ports,
            self.recorder,
            self.gate,
            self.context,
            self.policy,
            model=ModelStep(
                self.runtime, self.ports, self.context, self.tools, self.meter, self.add_usage,
                self._call_ids, lambda: self.recorder.history,
            ),  # fmt: skip
            dispatcher=self._dispatcher(budget),
            tools=self.tools,
            state=self._state,
            opening=functools.partial(self._open_turn, prompt, added),
            budget=budget,
            explicit=max_turns is not None,
        )

    async def stream(
        self, prompt: str | Sequence[UserContent], max_turns: int | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Run one turn and yield its events.

        Args:
            prompt: the user's message (text or multimodal content).
            max_turns: the most model requests this turn may make (default: ``max_model_requests``).

        Raises:
            AgentBusy: a turn is already running.
            ValueError: ``max_turns`` is less than 1.
        """
        if max_turns is not None and (
            isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1
        ):
            raise ValueError(f"max_turns must be a whole number of at least 1, not {max_turns!r}")
        if self.busy or self._shell_running:
            raise AgentBusy("a turn is already running")
        self._cancel_early = False
        if not self._started:
            self._opening = True  # a cancel while the agent starts ends the turn as soon as it exists
            try:
                await self.start()
            finally:
                self._opening = False
        typed = prompt  # what was put before it is recorded, so that a resumed log shows only this
        prompt = put_before(self._user_shell.take_context(), prompt)  # the user's own !commands
        if self.runtime.role.takes_checkpoint_notes:
            prompt = self.checkpointing.notes.take(prompt)  # after an undo or a rewind
        turn = self._new_turn(prompt, max_turns, len(prompt) - len(typed))
        self._turn = turn
        self.events.open()
        self.recorder.turn_opened()  # on disk: a fork taken in any process leaves this turn out
        task = asyncio.create_task(self._run(turn))
        task.add_done_callback(functools.partial(self._turn_over, turn))
        self._turn_task = task
        if self._cancel_early:
            self.cancel()
        try:
            async for event in self.events.drain():
                yield event
        finally:
            if not task.done():  # the consumer stopped early: stop the turn too
                self.cancel()
                await asyncio.gather(task, return_exceptions=True)
            self.events.release()

    async def _run(self, turn: Turn) -> None:
        try:
            await turn.run()
        finally:
            if self.runtime.role.owns_checkpoints:  # the state the agent left: later edits are the user's
                await self.checkpointing.after_turn()

    def _turn_over(self, turn: Turn, task: asyncio.Task[None]) -> None:
        """The one place a turn's stream ends: when its task is done, however it got there. A task
        cancelled before its first step never runs its own code (no ``finally``): the turn ends cancelled
        here, so a cancel at any moment (Esc right after Enter, a client's cancel in the same write as
        its prompt, SIGINT at the start) ends the stream."""
        if not turn.started:
            turn.end_unstarted()
        self.recorder.turn_closed()
        self.events.close()  # after the turn's last event

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
            executor = await self.kernel.ensure()
            timeout = self.runtime.settings.execution_timeout
            async for event in self._user_shell.run(executor, command, agent_id=self.agent_id, limit=timeout):
                yield event
        finally:
            self._shell_running = False


# -- how ``Agent``'s arguments become a ``Runtime`` ---------------------------------------------------
# ``Agent(model, settings, **overrides)`` and ``Agent.from_config(config, **overrides)`` take the same
# keywords: fields of ``Settings`` by name, and what is per agent (``OWN_KEYWORDS``). They are sorted
# here, the action protocol for ``"default"`` is decided once, and the defaults of what the caller left
# out are filled in (a new session id, the permission rules); the agent composes itself from the result.

OWN_KEYWORDS = (  # not settings
    "agent_id", "session_id", "permissions", "executor", "parent_corr_id", "eager_kernel", "file_access",
    "kernel_launch",
)  # fmt: skip


def take_own(overrides: dict[str, Any]) -> dict[str, Any]:
    """Remove the per-agent keywords from ``overrides`` and return them; what stays are settings."""
    return {k: overrides.pop(k) for k in OWN_KEYWORDS if k in overrides}


def resolve_runtime(
    model: str | Model, settings: Settings | None, overrides: dict[str, Any]
) -> tuple[Runtime, dict[str, Any]]:
    """The runtime ``Agent(model, settings, **overrides)`` runs with, and the per-agent keywords given.

    Raises:
        TypeError: a keyword is neither a ``Settings`` field nor one of the per-agent ones.
    """
    own = take_own(overrides)
    resolved = (settings or Settings()).with_overrides(**overrides)
    # "default" is decided once, here: the runtime, its subagents and the prompt see the choice.
    protocol = choose_protocol(resolved.action_protocol, model, resolved.base_url)
    resolved = resolved.with_overrides(action_protocol=protocol)
    permissions = own.get("permissions") or PermissionRules(
        None, skip_permissions=resolved.skip_permissions, working_dir=resolved.working_dir
    )
    permissions.sandboxed = resolved.execution == "sandbox"  # the sandboxed-auto mode is there
    agent_id, parent_corr_id = own.get("agent_id") or "main", own.get("parent_corr_id")
    runtime = Runtime(
        model=resolve_model(
            model, base_url=resolved.base_url, api_key_env=resolved.api_key_env, project_keys=resolved.provider_keys
        ),
        settings=resolved,
        session_id=own.get("session_id") or new_session_id(),
        permissions=permissions,
        agent_id=agent_id,
        executor=own.get("executor"),
        parent_corr_id=parent_corr_id,
        file_access=own.get("file_access"),
        model_spec=model if isinstance(model, str) else None,
        role=AgentRole.of(agent_id, parent_corr_id),
    )
    return runtime, own


def config_arguments(
    config: Config, overrides: dict[str, Any]
) -> tuple[str | Model, Settings, dict[str, Any]]:
    """``Agent``'s arguments for a validated ``Config``, keyword ``overrides`` winning.

    Returns the model, the settings and the per-agent keywords.

    Without ``permissions`` given, the rules are the working directory's (``rules_for``, as far as
    ``project_trusted`` lets the project's own rules count).

    Raises:
        ValueError: neither the config nor ``overrides`` names a model.
    """
    model = overrides.pop("model", config.model)
    if model is None:
        raise ValueError("no model configured")
    own = take_own(overrides)
    settings = Settings.from_config(config, **overrides)
    if own.get("permissions") is None:
        own["permissions"] = rules_for(
            settings.working_dir,
            skip_permissions=settings.skip_permissions,
            trusted=settings.project_trusted,
        )
    return model, settings, own


__all__ = ["Agent", "AgentBusy"]
