"""Dispatch of the model's tool calls: the code tool, the file tools, subagent delegation, JSON MCP tools.

Every call is approved through ``ask`` before it runs, reports its events through ``emit``, and
records its phase (execution, subagent) through ``set_phase`` so the turn knows what each of its
parallel calls is doing. The dispatcher knows nothing of the agent that owns it.

The calls the kernel carries out (code, a reset, the file tools) are read and asked right before they run,
one after another in the order the model gave them (``_in_order``): a call is read only once every earlier
call of the same kernel has finished, so its reading sees the file system it will run on (a parallel call
that renames a folder holding a relative symlink changes where the next one's paths lead; read at once,
both judged the folder as it was). Calls that run elsewhere (a subagent's kernel, an MCP server) still run
side by side.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from pydantic_ai.messages import ToolCallPart

from freeact_tui.actions.code import ActionOutcome, ActionProgress, CheckpointFn, CodeActionRunner
from freeact_tui.actions.files import FileToolOptions, FileTools
from freeact_tui.actions.ports import EmitFn, TurnPorts
from freeact_tui.events import (
    AgentError,
    AgentEvent,
    CheckpointNotice,
    CodeExecutionOutput,
    Decision,
    Phase,
    ToolOutput,
)
from freeact_tui.execution.base import Executor
from freeact_tui.execution.isolation.planted import PlantGuard
from freeact_tui.store.event_record import KERNEL_DIED
from freeact_tui.toolcalls import (
    CODE_TOOL,
    RESET_TOOL,
    SUBAGENT_TOOL,
    CodeAction,
    JsonToolCall,
    SubagentTask,
)


class JsonTools(Protocol):
    """The MCP servers whose tools the model calls as JSON tools."""

    def owns(self, tool_name: str) -> bool: ...

    async def call(self, tool_name: str, args: dict[str, Any]) -> tuple[str, bool]: ...


SubagentRunner = Callable[[str, int, str], Awaitable[ActionOutcome]]
"""Runs a delegated task (prompt, max turns, correlation id) to its end."""


@dataclass
class Dispatcher:
    """Runs one agent's tool calls.

    Args:
        ports: approval, events, phases, the kernel and big results (``TurnPorts``).
        json_tools: the JSON MCP tools.
        subagents: runs a subagent task, or ``None`` where subagents are off.
        execution_timeout: seconds a code action may run (approval waits excluded).
        prepare_executor: called with the executor before each code action (pins allowed MCP servers).
        files: the file tools' options (working dir, model profile, checkpoint hook); ``None``: no file tools.
        checkpoint: called before each approved action that can write (undo), or ``None``.
    """

    ports: TurnPorts
    json_tools: JsonTools
    subagents: SubagentRunner | None
    execution_timeout: float | None
    prepare_executor: Callable[[Executor], None] = lambda _: None
    files: FileToolOptions | None = None
    checkpoint: CheckpointFn | None = None

    def __post_init__(self) -> None:
        self._kernel_lock = asyncio.Lock()
        self._in_order = asyncio.Lock()
        """Held by a call the kernel carries out from its reading (its approval) to its end (FIFO: in the
        order the calls were started)."""
        self._ended: set[str] = set()
        """The calls (by id) that reported their end (their output, or their error) while they ran."""
        self.ports = replace(self.ports, emit=self._watched(self.ports.emit))
        self.printed: dict[str, str] = {}
        """What each cancelled code action printed before it was cancelled (by call id), for its return."""
        self._files = (
            FileTools(
                self.files,
                self.ports,
                lock=self._kernel_lock,
                timeout=self.execution_timeout,
            )
            if self.files is not None
            else None
        )

    def _watched(self, emit: EmitFn) -> EmitFn:
        """``emit`` that notes which calls reported their end (every part of a call emits through it)."""

        def watched(event: AgentEvent) -> None:
            if isinstance(event, ToolOutput | CodeExecutionOutput):
                self._ended.add(event.corr_id)
            emit(event)

        return watched

    async def run(self, call: ToolCallPart) -> ActionOutcome:
        """Run one call to its end; what the model is told is the outcome's content.

        Every call ends with exactly one event a front end can show: its output (``CodeExecutionOutput``,
        ``ToolOutput``), or the refusal of its approval request. A call that ended any other way (broken
        arguments, an unknown tool, a missing argument) is reported here, with what the model is told, so
        that no front end has a step it never hears about.
        """
        corr = call.tool_call_id
        self._ended.discard(corr)
        try:
            outcome = await self._run(call)
        finally:
            ended = corr in self._ended
            self._ended.discard(corr)
        if not ended and not (outcome.rejected or outcome.instructed):
            self.ports.emit(ToolOutput(outcome.content, is_error=outcome.is_error, **self.ports.ids(corr)))
        return outcome

    async def _run(self, call: ToolCallPart) -> ActionOutcome:
        try:
            args = call.args_as_dict(raise_if_invalid=True)
        except Exception as exc:
            return ActionOutcome(
                f"Invalid JSON arguments for `{call.tool_name}`: {exc}. Call it again with valid JSON arguments.",
                is_error=True,
                malformed=True,
            )
        corr = call.tool_call_id
        try:
            if call.tool_name == CODE_TOOL:
                code = args.get("code")
                if not isinstance(code, str):
                    return ActionOutcome("Missing string argument `code`.", is_error=True, malformed=True)
                async with self._in_order:
                    return await self._run_code(code, corr)
            if call.tool_name == RESET_TOOL:
                async with self._in_order:
                    return await self._run_reset(corr)
            if self._files is not None and self._files.owns(call.tool_name):
                async with self._in_order:
                    return await self._files.run(call.tool_name, args, corr)
            if call.tool_name == SUBAGENT_TOOL and self.subagents is not None:
                return await self._run_subagent(args, corr, self.subagents)
            if self.json_tools.owns(call.tool_name):
                return await self._run_json_tool(call.tool_name, args, corr)
        finally:
            self.ports.set_phase(corr, None)
        content = f"Unknown tool `{call.tool_name}`. Use `{CODE_TOOL}` to run code."
        return ActionOutcome(content, is_error=True, malformed=True)  # reported by ``run``

    async def _run_code(self, code: str, corr: str) -> ActionOutcome:
        decision = await self.ports.ask(CodeAction(code), corr)
        if not decision.approved:
            return _rejected("this code action", decision)
        executor = await self.ports.executor()
        self.prepare_executor(executor)
        runner = CodeActionRunner(
            self.ports,
            execution_timeout=self.execution_timeout,
            model_profile=self.files.model_profile if self.files is not None else None,
            checkpoint=self.checkpoint,
        )
        async with self._kernel_lock:
            self.ports.set_phase(corr, Phase.EXECUTION)
            if self.checkpoint is not None:
                await self.checkpoint([CodeAction(code)], corr)
            guard = await _plant_guard(executor)
            progress = ActionProgress()
            try:
                outcome = await runner.run(executor, code, corr, progress)
            except asyncio.CancelledError:
                self.printed[corr] = progress.text()
                raise
            finally:
                planted = await asyncio.to_thread(guard.finish) if guard is not None else None
            if planted is not None:
                self.ports.emit(CheckpointNotice(planted, **self.ports.ids(corr)))
                outcome = replace(outcome, content=f"{outcome.content}\n\n[{planted}]")
        if outcome.kernel_died:
            self.ports.emit(
                AgentError(
                    KERNEL_DIED,
                    kind="kernel",
                    **self.ports.ids(corr),
                )
            )
        return outcome

    async def _run_reset(self, corr: str) -> ActionOutcome:
        decision = await self.ports.ask(JsonToolCall(RESET_TOOL, {}), corr)
        if not decision.approved:
            return _rejected("the kernel reset", decision)
        executor = await self.ports.executor()
        async with self._kernel_lock:
            self.ports.set_phase(corr, Phase.EXECUTION)
            try:
                await executor.reset()
            except Exception as exc:  # the model is told; the turn goes on
                text = f"The kernel could not be reset: {exc}"
                self.ports.emit(ToolOutput(text, is_error=True, **self.ports.ids(corr)))
                return ActionOutcome(text, is_error=True)
            self.prepare_executor(executor)
        text = "The kernel was reset: variables, imports and definitions are gone; files and packages stay."
        self.ports.emit(ToolOutput(text, **self.ports.ids(corr)))
        return ActionOutcome(text)

    async def _run_json_tool(self, name: str, args: dict[str, Any], corr: str) -> ActionOutcome:
        decision = await self.ports.ask(JsonToolCall(name, args), corr)
        if not decision.approved:
            return _rejected(f"the call of `{name}`", decision)
        self.ports.set_phase(corr, Phase.EXECUTION)
        if self.checkpoint is not None:
            await self.checkpoint([JsonToolCall(name, args)], corr)
        text, is_error = await self.json_tools.call(name, args)
        kept = self.ports.overflow(text)
        self.ports.emit(
            ToolOutput(
                text,
                is_error=is_error,
                truncated=kept.truncated,
                result_path=kept.path,
                **self.ports.ids(corr),
            )
        )
        return ActionOutcome(kept.content, is_error=is_error)

    async def _run_subagent(self, args: dict[str, Any], corr: str, run: SubagentRunner) -> ActionOutcome:
        prompt = args.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return ActionOutcome("Missing string argument `prompt`.", is_error=True, malformed=True)
        requested = args.get("max_turns", 100)
        max_turns = requested if isinstance(requested, int) and requested > 0 else 100
        decision = await self.ports.ask(SubagentTask(prompt, max_turns), corr)
        if not decision.approved:
            return _rejected("this subagent task", decision)
        self.ports.set_phase(corr, Phase.SUBAGENT)
        outcome = await run(prompt, max_turns, corr)
        self.ports.emit(ToolOutput(outcome.content, is_error=outcome.is_error, **self.ports.ids(corr)))
        return outcome


async def _plant_guard(executor: Executor) -> PlantGuard | None:
    """A watch over the names that configure code for an executor whose code runs unwatched (the sandbox)."""
    working_dir = getattr(executor, "working_dir", None)
    if not getattr(executor, "guards_planted_names", False) or working_dir is None:
        return None
    return await asyncio.to_thread(PlantGuard, Path(working_dir))


def _rejected(what: str, decision: Decision) -> ActionOutcome:
    """What the model is told about a rejected action; with the user's instruction the turn goes on."""
    if decision.instruction:
        return ActionOutcome(
            f"The user rejected {what}. Instead, the user says: {decision.instruction}",
            instructed=True,
            is_error=True,
        )
    if decision.reason:
        return ActionOutcome(f"Refused {what}: {decision.reason}. Wait for new instructions.", rejected=True)
    return ActionOutcome(f"The user rejected {what}. Wait for new instructions.", rejected=True)


__all__ = ["Dispatcher", "JsonTools", "SubagentRunner"]
