"""Subagents: delegated tasks that run in kernels of their own, their events merged into the parent's."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from freeact_tui.agent.actions import ActionOutcome
from freeact_tui.agent.events import (
    AgentError,
    AgentEvent,
    ApprovalRequest,
    Cancelled,
    Response,
    SubagentState,
    SubagentStatus,
)
from freeact_tui.execution.pool import ExecutorPool

if TYPE_CHECKING:
    from freeact_tui.agent.core import Agent


def new_subagent_id() -> str:
    return f"sub-{uuid.uuid4().hex[:4]}"


class SubagentManager:
    """Runs ``subagent_task`` calls for one parent agent: at most ``max_running`` at once, warm kernels.

    Each subagent gets its own id (``sub-xxxx``), its own kernel, the parent's model, settings and
    permission rules, and no subagents of its own; its history goes to ``sub-xxxx.jsonl``.
    """

    def __init__(self, parent: Agent, *, max_running: int, pool: ExecutorPool) -> None:
        self._parent = parent
        self._slots = asyncio.Semaphore(max_running)
        self.pool = pool
        self.states: dict[str, SubagentState] = {}

    def _status(
        self,
        emit: Callable[[AgentEvent], None],
        sub_id: str,
        corr: str,
        state: SubagentState,
        task: str,
        detail: str = "",
    ) -> None:
        self.states[sub_id] = state
        event = SubagentStatus(state, task, detail, agent_id=sub_id, corr_id=corr, parent_corr_id=corr)
        emit(event)
        self._parent._notify(event)

    async def run(
        self, prompt: str, max_turns: int, corr: str, emit: Callable[[AgentEvent], None]
    ) -> ActionOutcome:
        """Run one delegated task to its end and return what the parent's model is told."""
        parent = self._parent
        sub_id = new_subagent_id()
        title = prompt.strip().splitlines()[0][:80] if prompt.strip() else "(task)"
        if parent.session is not None:
            parent.session.update_meta(subagent=(sub_id, title))
        self._status(emit, sub_id, corr, "queued", title)
        state: SubagentState = "failed"
        detail = ""
        try:
            async with self._slots:
                self._status(emit, sub_id, corr, "running", title)
                try:
                    executor = await self.pool.acquire()
                except Exception as exc:
                    detail = f"its kernel could not be started: {exc}"
                    return ActionOutcome(
                        f"Subagent {sub_id} failed: {detail}", is_error=True, subagent_id=sub_id
                    )
                try:
                    outcome, state, detail = await self._drive(
                        sub_id, prompt, max_turns, corr, executor, emit, title
                    )
                finally:
                    with contextlib.suppress(Exception):
                        await asyncio.shield(executor.stop())
                return outcome
        except asyncio.CancelledError:
            state, detail = "cancelled", "cancelled with the parent turn"
            raise
        finally:
            self._status(emit, sub_id, corr, state, title, detail)

    async def _drive(
        self,
        sub_id: str,
        prompt: str,
        max_turns: int,
        corr: str,
        executor: Any,
        emit: Callable[[AgentEvent], None],
        title: str,
    ) -> tuple[ActionOutcome, SubagentState, str]:
        from freeact_tui.agent.core import Agent

        parent = self._parent
        sub = Agent(
            parent.model,
            model_settings=parent.model_settings,
            agent_id=sub_id,
            session_id=parent.session_id,
            sessions_dir=parent.sessions_dir,
            working_dir=parent.working_dir,
            execution_timeout=parent.execution_timeout,
            approval_timeout=parent.approval_timeout,
            enable_subagents=False,
            skip_permissions=parent.skip_permissions,
            permissions=parent.permissions,
            executor=executor,
            tool_result_inline_max_bytes=parent.inline_max_bytes,
            tool_result_preview_chars=parent.preview_chars,
            parent_corr_id=corr,
        )
        sub.ptc_servers = parent.ptc_servers
        sub.mcp_description = parent.mcp_description
        answer: list[str] = []
        requests: list[ApprovalRequest] = []
        error: str | None = None
        waiting: set[asyncio.Task[None]] = set()

        async def back_to_running(request: ApprovalRequest) -> None:
            await request.wait()
            if self.states.get(sub_id) == "waiting":
                self._status(emit, sub_id, corr, "running", title)

        try:
            async with sub:
                async for event in sub.stream(prompt, max_turns=max_turns):
                    emit(event)
                    match event:
                        case Response(content=content):
                            answer.append(content)
                        case ApprovalRequest() if not event.decided:
                            requests.append(event)
                            self._status(emit, sub_id, corr, "waiting", title, "waiting for approval")
                            task = asyncio.create_task(back_to_running(event))
                            waiting.add(task)
                            task.add_done_callback(waiting.discard)
                        case AgentError(message=message):
                            error = message
                        case Cancelled():
                            error = "cancelled"
        finally:
            for task in list(waiting):
                task.cancel()
            parent.add_usage(sub.usage)  # the session's tokens and cost include its subagents
        rejected = [r for r in requests if r.decision is not None and not r.decision.approved]
        if rejected and error is None:
            what = rejected[0].tool_call.display_text()
            return (
                ActionOutcome(
                    f"The user rejected an action of subagent {sub_id}: {what}",
                    rejected=True,
                    subagent_id=sub_id,
                ),
                "failed",
                "an action was rejected",
            )
        if error is not None:
            content = f"Subagent {sub_id} failed: {error}"
            if answer:
                content += f"\nIts last answer:\n{answer[-1]}"
            return ActionOutcome(content, is_error=True, subagent_id=sub_id), "failed", error
        final = answer[-1] if answer else "(the subagent gave no answer)"
        preview, _ = parent._overflow(final)
        return ActionOutcome(preview, subagent_id=sub_id), "done", ""
