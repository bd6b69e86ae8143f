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
from typing import TYPE_CHECKING, Any, Literal

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    ToolCallPart,
    UserContent,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.settings import ModelSettings

from freeact_tui.agent import history as hist
from freeact_tui.agent.actions import ActionOutcome, ActionProgress, CodeActionRunner
from freeact_tui.agent.calls import CodeAction, JsonToolCall, SubagentTask, ToolCall
from freeact_tui.agent.events import (
    AgentError,
    AgentEvent,
    ApprovalRequest,
    Cancelled,
    Decision,
    KernelState,
    KernelStatus,
    ToolOutput,
    UsageUpdate,
)
from freeact_tui.agent.mcp import McpServerError
from freeact_tui.agent.mcp_ptc import package_name
from freeact_tui.agent.mcp_setup import McpSetup
from freeact_tui.agent.model_call import ModelCallError, request_response
from freeact_tui.agent.models import resolve_model
from freeact_tui.agent.permissions import PermissionRules, PermissionsFileError
from freeact_tui.agent.prompts import build_system_prompt
from freeact_tui.agent.subagents import SubagentManager
from freeact_tui.agent.tools import CODE_TOOL, SUBAGENT_TOOL, tool_definitions
from freeact_tui.execution.base import Executor, ExecutorError
from freeact_tui.execution.pool import ExecutorPool
from freeact_tui.store.sessions import Session, SessionDamaged, SessionStore, new_session_id

if TYPE_CHECKING:
    from freeact_tui.config import Config

Phase = Literal["model", "approval", "execution", "subagent", "idle"]

_END = object()


class AgentBusy(RuntimeError):
    """``stream()`` was called while a turn is still running."""


class Agent:
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
        execution: str = "local",
        images_dir: Path | None = None,
        execution_timeout: float = 300,
        approval_timeout: float | None = None,
        enable_subagents: bool = True,
        max_subagents: int = 5,
        skip_permissions: bool = False,
        permissions: PermissionRules | None = None,
        executor: Executor | None = None,
        base_url: str | None = None,
        api_key_env: str | None = None,
        tool_result_inline_max_bytes: int = 32768,
        tool_result_preview_chars: int = 2048,
        parent_corr_id: str | None = None,
        subagent_pool_size: int = 0,
        docker_image: str | None = None,
        remote_url: str | None = None,
        eager_kernel: bool = True,
    ) -> None:
        self.agent_id = agent_id
        self.model: Model = resolve_model(model, base_url=base_url, api_key_env=api_key_env)
        self.model_settings: ModelSettings | None = (
            ModelSettings(**model_settings) if isinstance(model_settings, dict) else model_settings  # type: ignore[typeddict-item]
        )
        self._custom_system_prompt = system_prompt
        self.session_id = session_id or new_session_id()
        self.working_dir = (working_dir or Path.cwd()).resolve()
        self.images_dir = images_dir
        self.execution_mode = execution
        self.docker_image = docker_image
        self.remote_url = remote_url
        self.kernel_env = dict(kernel_env or {})
        self.mcp_servers = dict(mcp_servers or {})
        self.mcp = McpSetup(self.mcp_servers if agent_id == "main" else {})
        self.mcp_description: str | None = None  # subagents get the parent's
        # MCP servers code in the kernel may call (package -> params + timeout), once generated;
        # None leaves a given executor's allow-list alone. Subagents get the parent's.
        self.ptc_servers: dict[str, dict[str, Any]] | None = None
        self.execution_timeout = execution_timeout
        self.approval_timeout = approval_timeout
        self.enable_subagents = enable_subagents and agent_id == "main"
        self.max_subagents = max_subagents
        self.skip_permissions = skip_permissions
        self.permissions = permissions or PermissionRules(
            None, skip_permissions=skip_permissions, working_dir=self.working_dir
        )
        self.inline_max_bytes = tool_result_inline_max_bytes
        self.preview_chars = tool_result_preview_chars
        self.parent_corr_id = parent_corr_id

        self.sessions_dir = sessions_dir
        self.subagent_pool_size = subagent_pool_size
        self._subagents: SubagentManager | None = None
        # Appends go straight to the OS (safe against a killed process); fsync runs once per turn, off the loop.
        self._store = SessionStore(sessions_dir, fsync=False) if sessions_dir is not None else None
        self._session: Session | None = self._store.session(self.session_id) if self._store else None
        self.history: list[ModelMessage] = []
        self.load_damage: SessionDamaged | None = None

        self._executor = executor
        self._owns_executor = executor is None
        self._eager_kernel = eager_kernel
        self._kernel_task: asyncio.Task[Executor] | None = None
        self._kernel_lock = asyncio.Lock()
        self._listeners: list[Callable[[AgentEvent], None]] = []
        self._queue: asyncio.Queue[Any] | None = None
        self._turn_task: asyncio.Task[None] | None = None
        self._cancel_requested = False
        self._phase: Phase = "idle"
        self._cancel_phase: Phase = "idle"
        self._input_tokens = 0
        self._output_tokens = 0
        self._requests = 0
        self._cost: float | None = None
        self._started = False

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def from_config(cls, config: Config, **overrides: Any) -> Agent:
        """Build an agent from a validated ``Config``; keyword ``overrides`` win."""
        kwargs: dict[str, Any] = {
            "model": config.model,
            "model_settings": config.model_settings or None,
            "system_prompt": config.system_prompt,
            "sessions_dir": config.resolved_sessions_dir(),
            "working_dir": config.resolved_working_dir(),
            "mcp_servers": {k: v for k, v in config.mcp_servers.items() if v.enabled},
            "kernel_env": config.kernel_env,
            "execution": config.execution,
            "images_dir": config.images_dir,
            "execution_timeout": config.execution_timeout,
            "approval_timeout": config.approval_timeout,
            "enable_subagents": config.enable_subagents,
            "max_subagents": config.max_subagents,
            "skip_permissions": config.skip_permissions,
            "base_url": config.base_url,
            "api_key_env": config.api_key_env,
            "tool_result_inline_max_bytes": config.tool_result_inline_max_bytes,
            "tool_result_preview_chars": config.tool_result_preview_chars,
            "subagent_pool_size": config.subagent_pool_size,
            "docker_image": config.docker_image,
            "remote_url": config.remote_url,
        }
        kwargs.update(overrides)
        if "permissions" not in kwargs:
            from freeact_tui import paths

            kwargs["permissions"] = PermissionRules.load(
                paths.permissions_file(),
                skip_permissions=bool(kwargs["skip_permissions"]),
                working_dir=kwargs["working_dir"],
            )
        model = kwargs.pop("model")
        if model is None:
            raise ValueError("no model configured")
        return cls(model, **kwargs)

    # -- properties ----------------------------------------------------------------------------

    @property
    def model_name(self) -> str:
        return self.model.model_name

    @property
    def busy(self) -> bool:
        return self._turn_task is not None and not self._turn_task.done()

    @property
    def kernel_state(self) -> KernelState:
        if self._executor is not None:
            return self._executor.state
        if self._kernel_task is not None and self._kernel_task.done() and self._kernel_task.exception():
            return "failed"
        return "starting" if self._kernel_task is not None else "stopped"

    @property
    def usage(self) -> UsageUpdate:
        return UsageUpdate(
            self._input_tokens,
            self._output_tokens,
            self._requests,
            self._cost,
            agent_id=self.agent_id,
        )

    @property
    def session(self) -> Session | None:
        return self._session

    def subscribe(self, callback: Callable[[AgentEvent], None]) -> None:
        """Receive status events outside turns (KernelStatus, UsageUpdate, SubagentStatus)."""
        self._listeners.append(callback)

    def _notify(self, event: AgentEvent) -> None:
        for listener in list(self._listeners):
            listener(event)

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
        if self._session is not None and self._session.exists():
            loaded = self._session.load(self.agent_id)
            self.history = list(loaded.messages)
            self.load_damage = loaded.damage
            dangling = hist.unanswered_calls(self.history)
            if dangling and self.load_damage is None:
                # A crash mid-turn left calls unanswered: answer them so the next request is valid.
                returns = hist.interrupted_returns(dangling, {})
                self._record(returns)
        self.mcp.start()
        if self._executor is not None:
            self._executor.add_state_listener(self._on_kernel_state)
        elif self._eager_kernel:
            self._kernel_task = asyncio.create_task(self._start_executor())
        if self.enable_subagents:
            pool = ExecutorPool(self._new_executor, self.subagent_pool_size)
            self._subagents = SubagentManager(self, max_running=self.max_subagents, pool=pool)
            if (
                self._kernel_task is not None
            ):  # warm subagent kernels only once ours is up: no race for the CPU
                self._kernel_task.add_done_callback(lambda _: pool.fill())
            else:
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
        self._started = False

    def _new_executor(self) -> Executor:
        from freeact_tui.execution import create_executor

        return create_executor(
            self.execution_mode,
            working_dir=self.working_dir,
            images_dir=self.images_dir,
            kernel_env=self.kernel_env,
            extra_pythonpath=self.mcp.pythonpath(),
            mcp_servers=self.ptc_servers,
            docker_image=self.docker_image,
            remote_url=self.remote_url,
        )

    async def _start_executor(self) -> Executor:
        self._notify(KernelStatus("starting", agent_id=self.agent_id))
        executor = self._new_executor()
        executor.add_state_listener(self._on_kernel_state)
        try:
            await executor.start()
        except BaseException as exc:
            self._notify(KernelStatus("failed", detail=str(exc), agent_id=self.agent_id))
            await asyncio.shield(executor.stop())
            raise
        self._executor = executor
        return executor

    def _ptc_allow_list(self) -> dict[str, dict[str, Any]]:
        """The generated APIs' connection parameters, each with its server's call timeout."""
        assert self.mcp.apis is not None
        timeouts: dict[str, float] = {}
        for name, config in self.mcp.ptc.items():
            try:
                timeouts[package_name(name)] = config.timeout
            except McpServerError:
                continue  # no package, so nothing to allow
        return {
            pkg: {**params, "timeout": timeouts[pkg]}
            for pkg, params in self.mcp.apis.params.items()
            if pkg in timeouts
        }

    def _on_kernel_state(self, state: KernelState, detail: str) -> None:
        self._notify(KernelStatus(state, detail=detail, agent_id=self.agent_id))

    async def _ensure_executor(self) -> Executor:
        if self._executor is not None:
            return self._executor
        if self._kernel_task is None:
            self._kernel_task = asyncio.create_task(self._start_executor())
        try:
            return await asyncio.shield(self._kernel_task)
        except ExecutorError:
            raise
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise ExecutorError(f"The kernel could not be started: {exc}") from exc

    # -- turns ----------------------------------------------------------------------------------

    def cancel(self) -> None:
        """Stop the running turn at once (model streaming, approval wait or execution)."""
        if self._turn_task is not None and not self._turn_task.done():
            self._cancel_requested = True
            self._cancel_phase = self._phase  # finally-blocks reset the phase while unwinding
            self._turn_task.cancel()

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
        if self.busy:
            raise AgentBusy("a turn is already running")
        if not self._started:
            await self.start()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self._queue = queue
        self._cancel_requested = False
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

    def _emit(self, event: AgentEvent) -> None:
        if self._queue is not None:
            self._queue.put_nowait(event)

    def _record(self, message: ModelMessage) -> None:
        self.history.append(message)
        if self._session is not None:
            self._session.append([message], agent_id=self.agent_id)

    def _rollback(self, count: int) -> None:
        del self.history[count:]
        if self._session is not None:
            self._session.rollback(count, agent_id=self.agent_id)

    def _system_prompt(self) -> str:
        if self._custom_system_prompt is not None:
            return self._custom_system_prompt
        return build_system_prompt(
            self.working_dir, mcp_apis=self.mcp_description, subagents=self.enable_subagents
        )

    async def _run_turn(self, prompt: str | Sequence[UserContent], max_turns: int | None) -> None:
        turn_start = len(self.history)
        state: dict[str, Any] = {"response": None, "calls": [], "done": {}, "meta": {}}
        try:
            if self.load_damage is not None:
                raise _TurnError(
                    "config",
                    f"This session is read-only: {self.load_damage}. Start a new session to go on.",
                )
            for problem in await self.mcp.ready():
                self._emit(AgentError(problem, kind="config", **self._ids()))
            self.mcp_description = self.mcp.description() or self.mcp_description
            if self.mcp.apis is not None:
                self.ptc_servers = self._ptc_allow_list()
            parts: list[Any] = []
            if not self.history:
                parts.append(SystemPromptPart(self._system_prompt()))
            parts.append(UserPromptPart(prompt if isinstance(prompt, str) else list(prompt)))
            self._record(ModelRequest(parts=parts))
            if self._session is not None and self.agent_id == "main" and turn_start == 0:
                title = prompt if isinstance(prompt, str) else "(multimodal prompt)"
                self._session.update_meta(title=title, cwd=str(self.working_dir), model=self.model_name)
            steps = 0
            while True:
                if max_turns is not None and steps >= max_turns:
                    self._emit(
                        AgentError(
                            f"Stopped after {max_turns} model requests (max_turns).",
                            kind="limit",
                            **self._ids(),
                        )
                    )
                    break
                steps += 1
                state.update(response=None, calls=[], done={}, meta={})
                response = await self._model_step(state)
                self._record(response)
                calls = hist.tool_calls(response)
                if not calls:
                    break
                state["calls"] = calls
                stop = await self._run_calls(calls, state["done"], state["meta"])
                self._record(hist.interrupted_returns(calls, state["done"], state["meta"]))
                if stop:
                    break
        except asyncio.CancelledError:
            if not self._cancel_requested:
                raise
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            self._finish_cancelled(state)
        except _TurnError as exc:
            if exc.kind == "model":
                self._rollback(turn_start)
            self._emit(AgentError(exc.message, kind=exc.kind, **self._ids()))
        except Exception as exc:  # never let a bug kill the UI: report it, keep the history valid
            if isinstance(exc, OSError | SessionDamaged):
                message = (
                    f"The session could not be saved: {exc}. The turn stopped; nothing after it was written."
                )
            else:
                message = f"Internal error: {type(exc).__name__}: {exc}"
            try:
                self._close_open_calls(state)
            except Exception:  # the same failure again (e.g. a full disk): the message above says it
                pass
            self._emit(AgentError(message, kind="internal", **self._ids()))
        finally:
            self._phase = "idle"
            if self._session is not None:
                try:
                    await asyncio.shield(asyncio.to_thread(self._session.sync))
                except (OSError, asyncio.CancelledError):
                    pass  # the data is with the OS already; only power-loss durability is lost
            if self._queue is not None:
                self._queue.put_nowait(_END)

    def _ids(self, corr_id: str = "") -> dict[str, Any]:
        return {"agent_id": self.agent_id, "corr_id": corr_id, "parent_corr_id": self.parent_corr_id}

    def _finish_cancelled(self, state: dict[str, Any]) -> None:
        phase = self._cancel_phase
        if phase == "model":
            partial = hist.partial_response(state.get("response"))
            if partial is not None:
                self._record(partial)
        else:
            self._close_open_calls(state)
        self._emit(Cancelled(phase=phase if phase != "idle" else "model", **self._ids()))

    def _close_open_calls(self, state: dict[str, Any]) -> None:
        calls: list[ToolCallPart] = state.get("calls") or []
        if calls and self.history and isinstance(self.history[-1], ModelResponse):
            self._record(hist.interrupted_returns(calls, state.get("done") or {}, state.get("meta")))

    # -- the model phase --------------------------------------------------------------------------

    def _request_parameters(self) -> ModelRequestParameters:
        return ModelRequestParameters(
            function_tools=[*tool_definitions(subagents=self.enable_subagents), *self.mcp.tool_definitions()]
        )

    async def _model_step(self, state: dict[str, Any]) -> ModelResponse:
        self._phase = "model"
        try:
            response = await request_response(
                self.model,
                hist.prepare_for_model(self.history),
                settings=self.model_settings,
                parameters=self._request_parameters(),
                emit=self._emit,
                ids=self._ids(),
                on_progress=lambda partial: state.__setitem__("response", partial),
            )
        except ModelCallError as exc:
            raise _TurnError("model", str(exc)) from exc
        self._account(response)
        return response

    def _account(self, response: ModelResponse) -> None:
        usage = response.usage
        cost: float | None = None
        try:
            cost = float(response.cost().total_price)
        except Exception:  # unknown model or no usage: cost stays unknown
            pass
        self.add_usage(UsageUpdate(usage.input_tokens or 0, usage.output_tokens or 0, 1, cost))

    def add_usage(self, usage: UsageUpdate) -> None:
        """Count tokens (this agent's, or a finished subagent's) into the session totals and report them."""
        self._input_tokens += usage.input_tokens
        self._output_tokens += usage.output_tokens
        self._requests += usage.requests
        if usage.cost_usd is not None:
            self._cost = (self._cost or 0.0) + usage.cost_usd
        update = self.usage
        self._emit(update)
        self._notify(update)

    # -- the tool phase ------------------------------------------------------------------------------

    async def _run_calls(
        self, calls: list[ToolCallPart], done: dict[str, str], meta: dict[str, dict[str, Any]]
    ) -> bool:
        """Run the calls of one response concurrently; return True when the turn must stop."""
        tasks = [asyncio.create_task(self._run_call(c, done, meta)) for c in calls]
        try:
            outcomes = await asyncio.gather(*tasks)
        except BaseException:
            # gather gives up at the first cancelled call; wait for every call (and its subagent) to wind down
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        return any(o.rejected or o.kernel_died for o in outcomes)

    async def _run_call(
        self, call: ToolCallPart, done: dict[str, str], meta: dict[str, dict[str, Any]]
    ) -> ActionOutcome:
        try:
            args = call.args_as_dict(raise_if_invalid=True)
        except Exception as exc:
            outcome = ActionOutcome(f"Invalid JSON arguments for {call.tool_name}: {exc}", is_error=True)
        else:
            outcome = await self._dispatch(call, args)
        done[call.tool_call_id] = outcome.content
        meta[call.tool_call_id] = outcome.metadata()
        return outcome

    async def _dispatch(self, call: ToolCallPart, args: dict[str, Any]) -> ActionOutcome:
        corr = call.tool_call_id
        if call.tool_name == CODE_TOOL:
            code = args.get("code")
            if not isinstance(code, str):
                return ActionOutcome("Missing string argument `code`.", is_error=True)
            return await self._run_code(code, corr)
        if call.tool_name == SUBAGENT_TOOL and self.enable_subagents:
            return await self._run_subagent(args, corr)
        if self.mcp.owns(call.tool_name):
            return await self._run_json_tool(call.tool_name, args, corr)
        content = f"Unknown tool `{call.tool_name}`. Use `{CODE_TOOL}` to run code."
        self._emit(ToolOutput(content, is_error=True, **self._ids(corr)))
        return ActionOutcome(content, is_error=True)

    async def ask(self, call: ToolCall, corr_id: str) -> Decision:
        """Yield an ApprovalRequest for ``call`` and wait for its decision (rules decide at once)."""
        request = ApprovalRequest(call, **self._ids(corr_id))
        effect = self.permissions.check(call)
        if effect == "allow":
            request.resolve(Decision(True, by_rule=True))
        elif effect == "deny":
            rule = self.permissions.matching_rule(call)
            named = f" `{rule.kind}:{rule.pattern}`" if rule else ""
            request.resolve(Decision(False, by_rule=True, reason=f"denied by the permission rule{named}"))
        self._emit(request)
        previous = self._phase
        self._phase = "approval"
        try:
            if self.approval_timeout is not None and not request.decided:
                try:
                    decision = await asyncio.wait_for(request.wait(), self.approval_timeout)
                except TimeoutError:
                    request.resolve(Decision(False))
                    decision = Decision(False)
                    self._emit(
                        ToolOutput(
                            f"No decision within {self.approval_timeout:g} s: rejected.",
                            is_error=True,
                            **self._ids(corr_id),
                        )
                    )
            else:
                decision = await request.wait()
        except BaseException:  # cancelled or failed: answer it, so no UI keeps asking
            request.resolve(Decision(False))
            raise
        finally:
            self._phase = previous
        if decision.remember and decision.pattern:
            effect = "allow" if decision.approved else "deny"
            try:
                self.permissions.add(call.kind, decision.pattern, scope=decision.remember, effect=effect)
            except PermissionsFileError as exc:  # the decision stands; only the rule is lost
                self._emit(ToolOutput(f"The rule was not saved: {exc}", is_error=True, **self._ids(corr_id)))
        return decision

    def _overflow(self, text: str) -> tuple[str, bool]:
        """Keep large results out of the history: a head/tail preview and the file's path."""
        data = text.encode("utf-8", errors="replace")
        if len(data) <= self.inline_max_bytes:
            return text, False
        half = self.preview_chars // 2
        where = "(not saved: persistence is off)"
        if self._session is not None:
            where = str(self._session.save_tool_result(text, "txt"))
        preview = f"{text[:half]}\n\n… [{len(data)} bytes in all; the full output is in {where}] …\n\n{text[-half:]}"
        return preview, True

    async def _run_code(self, code: str, corr: str) -> ActionOutcome:
        decision = await self.ask(CodeAction(code), corr)
        if not decision.approved:
            return ActionOutcome(_rejected("this code action", decision), rejected=True)
        try:
            executor = await self._ensure_executor()
        except ExecutorError as exc:
            raise _TurnError("kernel", str(exc)) from exc
        if self.ptc_servers is not None:  # pin the kernel's tool server to the configured MCP servers
            executor.set_mcp_servers(self.ptc_servers)
        runner = CodeActionRunner(
            ask=self.ask,
            emit=self._emit,
            agent_id=self.agent_id,
            parent_corr_id=self.parent_corr_id,
            execution_timeout=self.execution_timeout,
            overflow=self._overflow,
        )
        progress = ActionProgress()
        async with self._kernel_lock:
            self._phase = "execution"
            outcome = await runner.run(executor, code, corr, progress)
            self._phase = "model"
        if outcome.kernel_died:
            self._emit(
                AgentError(
                    "The kernel died while running this action and was restarted; variables are lost.",
                    kind="kernel",
                    **self._ids(corr),
                )
            )
        return outcome

    async def _run_json_tool(self, name: str, args: dict[str, Any], corr: str) -> ActionOutcome:
        decision = await self.ask(JsonToolCall(name, args), corr)
        if not decision.approved:
            return ActionOutcome(_rejected(f"the call of `{name}`", decision), rejected=True)
        self._phase = "execution"
        text, is_error = await self.mcp.call(name, args)
        self._phase = "model"
        self._emit(ToolOutput(text, is_error=is_error, **self._ids(corr)))
        return ActionOutcome(self._overflow(text)[0], is_error=is_error)

    async def _run_subagent(self, args: dict[str, Any], corr: str) -> ActionOutcome:
        prompt = args.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return ActionOutcome("Missing string argument `prompt`.", is_error=True)
        requested = args.get("max_turns", 100)
        max_turns = requested if isinstance(requested, int) and requested > 0 else 100
        decision = await self.ask(SubagentTask(prompt, max_turns), corr)
        if not decision.approved:
            return ActionOutcome(_rejected("this subagent task", decision), rejected=True)
        if self._subagents is None:
            return ActionOutcome("Subagents are not enabled.", is_error=True)
        self._phase = "subagent"
        outcome = await self._subagents.run(prompt, max_turns, corr, self._emit)
        self._emit(ToolOutput(outcome.content, is_error=outcome.is_error, **self._ids(corr)))
        return outcome


def _rejected(what: str, decision: Decision) -> str:
    """What the model is told about a rejected action."""
    if decision.reason:
        return f"Refused {what}: {decision.reason}. Wait for new instructions."
    return f"The user rejected {what}. Wait for new instructions."


class _TurnError(Exception):
    def __init__(self, kind: Literal["model", "kernel", "config", "internal"], message: str) -> None:
        super().__init__(message)
        self.kind: Literal["model", "kernel", "config", "internal"] = kind
        self.message = message


__all__ = ["Agent", "AgentBusy"]
