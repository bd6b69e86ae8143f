"""Subagents: delegated tasks that run in kernels of their own, their events merged into the parent's."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

from freeact_tui.actions.code import ActionOutcome
from freeact_tui.actions.ports import Overflow
from freeact_tui.agent.runtime import Runtime
from freeact_tui.events import (
    AgentError,
    AgentEvent,
    ApprovalRequest,
    Cancelled,
    Response,
    SubagentState,
    SubagentStatus,
    UsageUpdate,
)
from freeact_tui.execution.base import Executor
from freeact_tui.execution.kernel.pool import ExecutorPool
from freeact_tui.store.sessions import Session


class Delegate(Protocol):
    """What a subagent is to its manager: an agent that streams one task and counts its tokens."""

    async def __aenter__(self) -> Any: ...

    async def __aexit__(self, *exc: object) -> None: ...

    @property
    def usage(self) -> UsageUpdate: ...

    def stream(self, prompt: str, max_turns: int | None = None) -> AsyncIterator[AgentEvent]: ...


def new_subagent_id() -> str:
    return f"sub-{uuid.uuid4().hex[:4]}"


class SubagentManager:
    """Runs ``subagent_task`` calls for one parent agent: at most ``max_running`` at once, warm kernels.

    Each subagent gets its own id (``sub-xxxx``), its own kernel, the parent's model, settings and
    permission rules (``Runtime.for_subagent``), and no subagents of its own; its history goes to
    ``sub-xxxx.jsonl``.

    Args:
        runtime: the parent's runtime (its settings).
        derive: a subagent's runtime from the parent as it is when the task starts (its rules, the MCP
            APIs it learned): ``(sub_id, executor, corr_id) -> Runtime``.
        factory: makes an agent for a subagent's runtime.
        publish: reports a subagent's status (into the parent's turn, or to its listeners).
        add_usage: counts a finished subagent's usage into the parent's session totals.
        overflow: the parent's way of keeping big results out of its history.
        session: the parent's session (its metadata lists the subagents), if persisted.
        pool: warm kernels for subagents.
    """

    @classmethod
    def started(
        cls,
        runtime: Runtime,
        *,
        derive: Callable[[str, Executor, str], Runtime],
        new_executor: Callable[[], Executor],
        parent_kernel: asyncio.Task[Executor] | None,
        eager: bool,
        factory: Callable[[Runtime], Delegate],
        publish: Callable[[SubagentStatus], None],
        add_usage: Callable[[UsageUpdate], None],
        overflow: Callable[[str], Overflow],
        session: Session | None,
    ) -> SubagentManager:
        """A manager whose warm kernels start once the parent's kernel is up (``eager``: at once, when
        the parent's is not starting)."""
        pool = ExecutorPool(new_executor, runtime.settings.subagent_pool_size)
        manager = cls(
            runtime, derive=derive, factory=factory, publish=publish, add_usage=add_usage, overflow=overflow, session=session, pool=pool
        )
        if parent_kernel is not None:
            parent_kernel.add_done_callback(lambda _: pool.fill())
        elif eager:
            pool.fill()
        return manager

    def __init__(
        self,
        runtime: Runtime,
        *,
        derive: Callable[[str, Executor, str], Runtime],
        factory: Callable[[Runtime], Delegate],
        publish: Callable[[SubagentStatus], None],
        add_usage: Callable[[UsageUpdate], None],
        overflow: Callable[[str], Overflow],
        session: Session | None,
        pool: ExecutorPool,
    ) -> None:
        self._runtime = runtime
        self._derive = derive
        self._factory = factory
        self._publish = publish
        self._add_usage = add_usage
        self._overflow = overflow
        self._session = session
        self._slots = asyncio.Semaphore(runtime.settings.max_subagents)
        self.pool = pool
        self.states: dict[str, SubagentState] = {}

    def _status(
        self,
        sub_id: str,
        corr: str,
        state: SubagentState,
        task: str,
        detail: str = "",
    ) -> None:
        self.states[sub_id] = state
        self._publish(SubagentStatus(state, task, detail, agent_id=sub_id, corr_id=corr, parent_corr_id=corr))

    async def run(
        self,
        prompt: str,
        max_turns: int,
        corr: str,
        emit: Callable[[AgentEvent], None],
        spent: Callable[[int], None] = lambda _: None,
    ) -> ActionOutcome:
        """Run one delegated task to its end and return what the parent's model is told; ``spent`` is
        told the model requests the subagent made (the parent turn's budget counts them)."""
        sub_id = new_subagent_id()
        title = prompt.strip().splitlines()[0][:80] if prompt.strip() else "(task)"
        if self._session is not None:
            self._session.update_meta(subagent=(sub_id, title))
        self._status(sub_id, corr, "queued", title)
        state: SubagentState = "failed"
        detail = ""
        try:
            async with self._slots:
                self._status(sub_id, corr, "running", title)
                try:
                    executor = await self.pool.acquire()
                except Exception as exc:
                    detail = f"its kernel could not be started: {exc}"
                    return ActionOutcome(
                        f"Subagent {sub_id} failed: {detail}", is_error=True, subagent_id=sub_id
                    )
                try:
                    outcome, state, detail = await self._drive(
                        sub_id, prompt, max_turns, corr, executor, emit, title, spent
                    )
                finally:
                    with contextlib.suppress(Exception):
                        await asyncio.shield(executor.stop())
                return outcome
        except asyncio.CancelledError:
            state, detail = "cancelled", "cancelled with the parent turn"
            raise
        finally:
            self._status(sub_id, corr, state, title, detail)

    async def _drive(
        self,
        sub_id: str,
        prompt: str,
        max_turns: int,
        corr: str,
        executor: Any,
        emit: Callable[[AgentEvent], None],
        title: str,
        spent: Callable[[int], None],
    ) -> tuple[ActionOutcome, SubagentState, str]:
        sub = self._factory(self._derive(sub_id, executor, corr))
        answer: list[str] = []
        requests: list[ApprovalRequest] = []
        error: str | None = None
        waiting: set[asyncio.Task[None]] = set()

        async def back_to_running(request: ApprovalRequest) -> None:
            await request.wait()
            if self.states.get(sub_id) == "waiting":
                self._status(sub_id, corr, "running", title)

        try:
            async with sub:
                async for event in sub.stream(prompt, max_turns=max_turns):
                    emit(event)
                    match event:
                        case Response(content=content):
                            answer.append(content)
                        case ApprovalRequest() if not event.decided:
                            requests.append(event)
                            self._status(sub_id, corr, "waiting", title, "waiting for approval")
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
            self._add_usage(sub.usage)  # the session's tokens and cost include its subagents
            spent(sub.usage.requests)  # and the parent turn's request budget its requests
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
        return ActionOutcome(self._overflow(final).content, subagent_id=sub_id), "done", ""
