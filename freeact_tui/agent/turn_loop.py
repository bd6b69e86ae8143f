"""The turn loop of ``Agent``: model request → tool calls → results → … until an answer without calls.

Kept apart from the agent's lifecycle (``agent.py``); what it needs of the agent is declared here.
Failures end the turn with an ``AgentError`` and a valid history: a failed model request is rolled
back, unfinished calls are answered, a cancelled turn keeps what the model had streamed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
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
from pydantic_ai.models import ModelRequestParameters

from freeact_tui.actions.code import ActionOutcome
from freeact_tui.actions.definitions import tool_definitions
from freeact_tui.actions.dispatch import Dispatcher
from freeact_tui.actions.files import FileToolOptions
from freeact_tui.agent import history as hist
from freeact_tui.agent.compaction import ContextKeeper
from freeact_tui.agent.model_call import ModelCallError, request_response
from freeact_tui.agent.nudge import nudge_for
from freeact_tui.agent.prompts import build_system_prompt
from freeact_tui.agent.repeat_guard import failed_before, repeat_message
from freeact_tui.agent.text_protocol import (
    ActionProtocol,
    repeats_last_actions,
    reply_text,
    switch_request,
    text_actions,
)
from freeact_tui.agent.written_calls import with_written_calls
from freeact_tui.events import AgentError, AgentEvent, Cancelled, Nudge, Phase, ToolOutput
from freeact_tui.execution.base import Executor, ExecutorError
from freeact_tui.mcp.gentools import gentools_root, gentools_section
from freeact_tui.mcp.ptc import package_name
from freeact_tui.mcp.servers import McpServerError
from freeact_tui.store.sessions import SessionDamaged

if TYPE_CHECKING:
    from freeact_tui.agent.approvals import ApprovalGate
    from freeact_tui.agent.checkpointing import Checkpointing
    from freeact_tui.agent.recorder import Recorder
    from freeact_tui.agent.runtime import Runtime
    from freeact_tui.agent.subagents import SubagentManager
    from freeact_tui.agent.turn import TurnState
    from freeact_tui.agent.usage import UsageMeter
    from freeact_tui.events import UsageUpdate
    from freeact_tui.mcp.setup import McpSetup


MAX_MALFORMED_STEPS = 3
"""Responses in a row whose tool calls are all broken before the turn stops (each got a corrective return)."""


class TurnError(Exception):
    """Ends a turn with a message of the given kind (a failed model request is rolled back)."""

    def __init__(
        self,
        kind: Literal["model", "kernel", "config", "internal"],
        message: str,
        partial: ModelResponse | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: Literal["model", "kernel", "config", "internal"] = kind
        self.message = message
        self.partial = partial


class TurnLoop(ContextKeeper):
    """The turn loop, mixed into ``Agent``."""

    runtime: Runtime
    agent_id: str
    recorder: Recorder
    meter: UsageMeter
    gate: ApprovalGate
    checkpointing: Checkpointing
    mcp: McpSetup
    enable_subagents: bool
    _turn: TurnState
    _subagents: SubagentManager | None
    _cancel_requested: bool
    _cancel_phase: Phase
    _steering: list[str]

    def _emit(self, event: AgentEvent) -> None:
        raise NotImplementedError

    def _end_stream(self) -> None:
        raise NotImplementedError

    def add_usage(self, usage: UsageUpdate) -> None:
        raise NotImplementedError

    async def _ensure_executor(self) -> Executor:
        raise NotImplementedError

    def _ids(self, corr_id: str = "") -> dict[str, Any]:
        return {"agent_id": self.agent_id, "corr_id": corr_id, "parent_corr_id": self.runtime.parent_corr_id}

    def _system_prompt(self) -> str:
        custom = self.runtime.settings.system_prompt
        if custom is not None:
            return custom
        working_dir = self.runtime.settings.working_dir
        trusted = self.runtime.settings.project_trusted
        return build_system_prompt(
            working_dir,
            mcp_apis=self.runtime.mcp_description,
            subagents=self.enable_subagents,
            # A project's saved tools describe themselves to the model: not before it is trusted.
            gentools=gentools_section(gentools_root(working_dir, trusted=True), working_dir) if trusted else None,
            protocol=self.runtime.settings.action_protocol,
            project=self.runtime.settings.project_trusted,
        )

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

    async def _turn_executor(self) -> Executor:
        try:
            return await self._ensure_executor()
        except ExecutorError as exc:
            raise TurnError("kernel", str(exc)) from exc

    def _pin_mcp_servers(self, executor: Executor) -> None:
        if self.runtime.ptc_servers is not None:  # pin the kernel's tool server to the configured MCP servers
            executor.set_mcp_servers(self.runtime.ptc_servers)

    def _dispatcher(self) -> Dispatcher:
        subagents = self._subagents
        checkpoint = self.checkpointing.hook(self.agent_id)
        return Dispatcher(
            ask=self.gate.ask,
            emit=self._emit,
            ids=self._ids,
            set_phase=self._turn.set_phase,
            executor=self._turn_executor,
            overflow=self.recorder.overflow,
            json_tools=self.mcp,
            subagents=(lambda p, m, c: subagents.run(p, m, c, self._emit)) if subagents is not None else None,
            execution_timeout=self.runtime.settings.execution_timeout,
            prepare_executor=self._pin_mcp_servers,
            files=FileToolOptions(
                self.runtime.settings.working_dir,
                lambda: self.runtime.model.profile,
                before_write=(lambda call, corr: checkpoint([call], corr))
                if checkpoint is not None
                else None,
            ),
            checkpoint=checkpoint,
        )

    async def _prepare_turn(self, prompt: str | Sequence[UserContent], turn_start: int) -> None:
        if self.recorder.load_damage is not None or self.recorder.locked is not None:
            raise TurnError(
                "config",
                f"This session is read-only: {self.recorder.load_damage or self.recorder.locked}. "
                "Start a new session to go on.",
            )
        for problem in await self.mcp.ready():
            self._emit(AgentError(problem, kind="config", **self._ids()))
        self.runtime.mcp_description = self.mcp.description() or self.runtime.mcp_description
        if self.mcp.apis is not None:
            self.runtime.ptc_servers = self._ptc_allow_list()
        parts: list[Any] = []
        if not self.recorder.history:
            parts.append(SystemPromptPart(self._system_prompt()))
        parts.append(UserPromptPart(prompt if isinstance(prompt, str) else list(prompt)))
        self.recorder.record(ModelRequest(parts=parts))
        session = self.recorder.session
        if session is not None and self.agent_id == "main" and turn_start == 0:
            title = prompt if isinstance(prompt, str) else "(multimodal prompt)"
            session.update_meta(
                title=title, cwd=str(self.runtime.settings.working_dir), model=self.runtime.model.model_name
            )

    async def _run_turn(self, prompt: str | Sequence[UserContent], max_turns: int | None) -> None:
        turn_start = len(self.recorder.history)
        generation = self.recorder.generation
        state = self._turn
        try:
            await self._prepare_turn(prompt, turn_start)
            dispatcher = self._dispatcher()
            steps = 0
            malformed = 0
            while True:
                if max_turns is not None and steps >= max_turns:
                    message = f"Stopped after {max_turns} model requests (max_turns)."
                    self._emit(AgentError(message, kind="limit", **self._ids()))
                    break
                steps += 1
                state.next_step()
                response = await self._model_step(state)
                written = self._written_calls(response)
                response = written or response
                self.recorder.record(response)
                calls = hist.tool_calls(response)
                if not calls:
                    turn = (
                        self.recorder.history[turn_start:] if self.recorder.generation == generation else None
                    )
                    if await self._text_actions(dispatcher, response, turn):
                        continue
                    if turn is not None and self._nudge(response, turn):
                        continue
                    break
                state.calls = calls
                stop, all_malformed = await self._run_calls(
                    dispatcher, calls, state, in_order=written is not None
                )
                self.recorder.record(hist.interrupted_returns(calls, state.done, state.meta))
                if stop:
                    break
                malformed = malformed + 1 if all_malformed else 0
                reason = self.protocol.switch_after_malformed(malformed)
                if reason is not None:  # auto: the model cannot call tools; it acts in code blocks now
                    self.protocol.switch(reason)
                    self.recorder.record(switch_request(reason))
                    continue
                if malformed >= MAX_MALFORMED_STEPS:
                    message = (
                        f"The model sent broken tool calls {malformed} times in a row "
                        f"({str(next(iter(state.done.values()), ''))[:200]}); the turn stopped. "
                        "Try again, rephrase, use a model that is better at tool calls, "
                        "or let it write code blocks instead (--action-protocol auto or text)."
                    )
                    self._emit(AgentError(message, kind="model", **self._ids()))
                    break
                self._take_steering()
        except asyncio.CancelledError:
            if not self._cancel_requested:
                raise
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            self._finish_cancelled(state)
        except TurnError as exc:
            kept = hist.incomplete_response(exc.partial) if exc.partial is not None else None
            if kept is not None:  # the user saw part of a reply: keep it, marked incomplete
                self.recorder.record(kept)
            elif exc.kind == "model":
                self.recorder.rollback(turn_start)
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
            state.in_model = False
            state.phases.clear()
            await self.recorder.sync()
            self._end_stream()

    def _take_steering(self) -> None:
        """Messages the user sent into the running turn go to the model with its next request."""
        if self._steering:
            texts, self._steering = self._steering, []
            self.recorder.record(ModelRequest(parts=[UserPromptPart(t) for t in texts]))

    def _finish_cancelled(self, state: TurnState) -> None:
        phase = self._cancel_phase
        if phase == Phase.MODEL:
            partial = hist.partial_response(state.response)
            if partial is not None:
                self.recorder.record(partial)
        else:
            self._close_open_calls(state)
        self._emit(Cancelled(phase=phase if phase != Phase.IDLE else Phase.MODEL, **self._ids()))

    def _close_open_calls(self, state: TurnState) -> None:
        history = self.recorder.history
        if state.calls and history and isinstance(history[-1], ModelResponse):
            self.recorder.record(hist.interrupted_returns(state.calls, state.done, state.meta))

    # -- the text protocol (code blocks in the reply are the actions) -------------------------------

    @property
    def protocol(self) -> ActionProtocol:
        protocol: ActionProtocol | None = self.__dict__.get("_action_protocol")
        if protocol is None:
            protocol = ActionProtocol(self.runtime.settings.action_protocol, self._emit, self._ids)
            self.__dict__["_action_protocol"] = protocol
        protocol.resume(self.recorder.history)
        return protocol

    async def _text_actions(
        self, dispatcher: Dispatcher, response: ModelResponse, turn: Sequence[ModelMessage] | None
    ) -> bool:
        """Run the code blocks of a reply without tool calls; False: it is the final answer (or a rejection).

        ``turn``: the turn's messages (``None`` if a compaction rewrote them).
        """
        protocol = self.protocol
        switched = protocol.switch_reason(response, self.recorder.history)
        if switched is not None:
            protocol.switch(switched)
        if not protocol.text and not (turn is not None and protocol.runs_blocks_to_repair(response, turn)):
            return False
        actions = text_actions(reply_text(response))
        if not actions or (turn is not None and repeats_last_actions(actions, turn)):
            return False  # no blocks, or the code that just ran, restated in the answer
        stop = await protocol.run(dispatcher, actions, self.recorder.record, switched=switched)
        return not stop

    def _nudge(self, response: ModelResponse, turn: Sequence[ModelMessage]) -> bool:
        """``auto``/``text``: tell a model that would end the turn without acting (or answering) to do so (``nudge.py``)."""
        found = nudge_for(
            response,
            self.recorder.history,
            turn,
            protocol=self.runtime.settings.action_protocol,
            text_mode=self.protocol.text,
        )
        if found is None:
            return False
        reason, told, request = found
        self._emit(Nudge(reason.log, told, **self._ids()))
        self.recorder.record(request)
        return True

    def _repeat_guard(self, call: ToolCallPart) -> ActionOutcome | None:
        """``auto``: the call that failed in the step before is not run again (``repeat_guard.py``)."""
        if self.runtime.settings.action_protocol != "auto":
            return None
        error = failed_before(call, self.recorder.history)
        if error is None:
            return None
        message = repeat_message(call, error)
        self._emit(ToolOutput(message, is_error=True, **self._ids(call.tool_call_id)))
        return ActionOutcome(message, is_error=True)

    def _written_calls(self, response: ModelResponse) -> ModelResponse | None:
        """``auto`` on tool calls: calls of offered tools the model wrote as text become calls (``written_calls.py``)."""
        if self.runtime.settings.action_protocol != "auto" or self.protocol.text:
            return None
        tools = {
            t.name: list(t.parameters_json_schema.get("properties", {}))
            for t in self._request_parameters().function_tools
        }
        return with_written_calls(response, tools)

    # -- the model phase --------------------------------------------------------------------------

    def _request_parameters(self) -> ModelRequestParameters:
        if self.protocol.text:  # the actions are code blocks in the reply: no tool schemas
            return ModelRequestParameters(function_tools=[])
        return ModelRequestParameters(
            function_tools=[*tool_definitions(subagents=self.enable_subagents), *self.mcp.tool_definitions()]
        )

    async def _model_step(self, state: TurnState) -> ModelResponse:
        state.in_model = True
        messages = await self._prepared_history()  # may compact first (agent/compaction.py)
        parameters = self._request_parameters()
        try:
            response = await request_response(
                self.runtime.model,
                messages,
                settings=self.runtime.settings.model_settings,
                parameters=parameters,
                emit=self._emit,
                ids=self._ids(),
                on_progress=lambda partial: setattr(state, "response", partial),
                idle_timeout=self.runtime.settings.model_idle_timeout,
            )
        except ModelCallError as exc:
            raise TurnError("model", str(exc), exc.partial) from exc
        finally:
            state.in_model = False
        estimate = self._request_estimate(parameters.function_tools)  # used if the server reports none
        self.add_usage(self.meter.of_response(response, estimate))
        self._report_context(response)
        return response

    # -- the tool phase ------------------------------------------------------------------------------

    async def _run_calls(
        self, dispatcher: Dispatcher, calls: list[ToolCallPart], state: TurnState, *, in_order: bool = False
    ) -> tuple[bool, bool]:
        """Run the calls of one response concurrently (``in_order``: one after the other, as calls
        written as text are meant); return (the turn must stop, every call was broken)."""

        async def run(call: ToolCallPart) -> ActionOutcome:
            outcome = self._repeat_guard(call) or await dispatcher.run(call)
            state.done[call.tool_call_id] = outcome.tool_content()
            state.meta[call.tool_call_id] = outcome.metadata() | self.gate.take_records(call.tool_call_id)
            return outcome

        if in_order:
            outcomes = [await run(c) for c in calls]
            return any(o.rejected or o.kernel_died for o in outcomes), all(o.malformed for o in outcomes)
        tasks = [asyncio.create_task(run(c)) for c in calls]
        try:
            outcomes = await asyncio.gather(*tasks)
        except BaseException:
            # gather gives up at the first cancelled call; wait for every call (and its subagent) to wind down
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        return any(o.rejected or o.kernel_died for o in outcomes), all(o.malformed for o in outcomes)


__all__ = ["TurnError", "TurnLoop"]
