"""Subagents: parallel delegated tasks in kernels of their own, scripted model, real kernels."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from pydantic_ai.messages import ModelRequest, ToolReturnPart

from freeact_tui.events import (
    AgentEvent,
    ApprovalRequest,
    Cancelled,
    CodeExecutionOutputChunk,
    SubagentStatus,
    ToolOutput,
)
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.store.sessions import SessionStore
from freeact_tui.toolcalls import CodeAction, SubagentTask
from tests.executor_checks import descendants, no_new_descendants, until
from tests.helpers import collect, make_parent, routed_model, statuses

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def executor(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[KernelExecutor]:
    work = tmp_path_factory.mktemp("parent")
    ex = KernelExecutor(working_dir=work)
    await ex.start()
    yield ex
    await ex.stop()


async def test_three_subagents_with_max_two_run_in_parallel(executor: KernelExecutor, tmp_path: Path) -> None:
    tasks = {"task A": "ca", "task B": "cb", "task C": "cc"}
    model = routed_model(tasks, lambda p: f"import time; time.sleep(1.0); print('{p} ok')")
    async with make_parent(model, executor, tmp_path, max_subagents=2) as parent:
        events = await collect(parent, "delegate")
    seq = statuses(events)
    running_order = list(dict.fromkeys(t for t, s in seq if s == "running"))
    assert sorted(running_order) == sorted(tasks)
    third = running_order[2]
    # the third one only started once another had finished
    assert seq.index((third, "running")) > min(seq.index((t, "done")) for t in running_order[:2])
    assert {t for t, s in seq if s == "done"} == set(tasks)
    final = [e for e in events if isinstance(e, ToolOutput) and e.agent_id == "main"]
    assert sorted(e.content for e in final) == [f"answer for {t}: {t} ok" for t in sorted(tasks)]
    # subagent events carry their own id and the parent's call id
    chunks = [e for e in events if isinstance(e, CodeExecutionOutputChunk)]
    assert {e.parent_corr_id for e in chunks} == set(tasks.values())
    assert all(e.agent_id.startswith("sub-") for e in chunks)
    # persisted: one sub-xxxx.jsonl per subagent, listed in the session's metadata
    session_dir = tmp_path / "sessions" / parent.session_id
    assert len(list(session_dir.glob("sub-*.jsonl"))) == 3
    info = SessionStore(tmp_path / "sessions").session(parent.session_id).info()
    assert sorted(info.subagents.values()) == sorted(tasks)
    # the session's usage counts the subagents' requests too (1 parent request each side of the calls)
    assert parent.usage.requests == 2 + 3 * 2
    # the outcome and the subagent's id are stored with each return (for UIs; never sent to the model)
    returns = [
        p
        for m in parent.history
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    ]
    assert {p.metadata["outcome"] for p in returns} == {"ok"}
    assert {p.metadata["subagent_id"] for p in returns} == {
        e.agent_id for e in events if isinstance(e, SubagentStatus)
    }
    # resume restores the main history only: the parent's final answer is the last message
    async with make_parent(model, executor, tmp_path, session_id=parent.session_id) as resumed:
        assert len(resumed.history) == len(parent.history)
        assert all(m.kind in ("request", "response") for m in resumed.history)


async def test_approvals_from_two_subagents_queue(executor: KernelExecutor, tmp_path: Path) -> None:
    tasks = {"task X": "cx", "task Y": "cy"}
    model = routed_model(tasks, lambda p: f"print('{p}')")
    pending: list[ApprovalRequest] = []

    def on_event(event: AgentEvent) -> None:
        if not isinstance(event, ApprovalRequest) or event.decided:
            return
        if isinstance(event.tool_call, SubagentTask):
            event.approve(True)
            return
        pending.append(event)
        if len(pending) == 2:  # both subagents wait at the same time; decide them in order
            for request in pending:
                request.approve(True)

    async with make_parent(model, executor, tmp_path) as parent:
        events = await collect(parent, "delegate", on_event)
    code_requests = [
        e for e in events if isinstance(e, ApprovalRequest) and isinstance(e.tool_call, CodeAction)
    ]
    assert len({e.agent_id for e in code_requests}) == 2
    assert {e.parent_corr_id for e in code_requests} == {"cx", "cy"}
    assert ("task X", "waiting") in statuses(events) and ("task Y", "waiting") in statuses(events)


async def test_rejected_subagent_task_ends_turn(executor: KernelExecutor, tmp_path: Path) -> None:
    model = routed_model({"task R": "cr"}, lambda p: "print('never')")

    def reject_all(event: AgentEvent) -> None:
        if isinstance(event, ApprovalRequest) and not event.decided:
            event.approve(False)

    async with make_parent(model, executor, tmp_path) as parent:
        events = await collect(parent, "delegate", reject_all)
        assert not [e for e in events if isinstance(e, SubagentStatus)]
        last = parent.history[-1]
        assert isinstance(last, ModelRequest)
        assert "rejected" in str(last.parts[0].content)  # type: ignore[union-attr]


async def test_subagent_kernel_death_returns_clear_error(executor: KernelExecutor, tmp_path: Path) -> None:
    model = routed_model({"task D": "cd"}, lambda p: "import os; os._exit(1)")
    async with make_parent(model, executor, tmp_path) as parent:
        events = await collect(parent, "delegate")
    assert ("task D", "failed") in statuses(events)
    outputs = [e for e in events if isinstance(e, ToolOutput) and e.agent_id == "main"]
    assert outputs[0].is_error and "failed" in outputs[0].content and "kernel" in outputs[0].content.lower()


async def test_cancel_parent_cancels_subagents(executor: KernelExecutor, tmp_path: Path) -> None:
    tasks = {"task S1": "c1", "task S2": "c2"}
    model = routed_model(tasks, lambda p: "import time\nprint('sleeping', flush=True)\ntime.sleep(60)")
    before = descendants()
    async with make_parent(model, executor, tmp_path) as parent:
        seen = 0
        events: list[AgentEvent] = []
        loop = asyncio.get_running_loop()
        start = loop.time()
        async for event in parent.stream("delegate"):
            events.append(event)
            if isinstance(event, ApprovalRequest) and not event.decided:
                event.approve(True)
            if isinstance(event, CodeExecutionOutputChunk):
                seen += 1
                if seen == 2:
                    parent.cancel()
        assert loop.time() - start < 40
    assert any(isinstance(e, Cancelled) and e.agent_id == "main" for e in events)
    assert {t for t, s in statuses(events) if s == "cancelled"} == set(tasks)
    await no_new_descendants(before)  # no subagent kernel left running


async def test_warm_pool_hands_out_a_started_kernel(executor: KernelExecutor, tmp_path: Path) -> None:
    model = routed_model({"task W": "cw"}, lambda p: "import os\nprint('warm', os.getpid())")
    async with make_parent(model, executor, tmp_path, subagent_pool_size=1) as parent:
        manager = parent._subagents
        assert manager is not None
        # A kernel start takes seconds, many more on a loaded machine.
        await until(lambda: manager.pool.ready_count == 1, "the pool has a started kernel", within=60)
        warm_pid = getattr(manager.pool._ready[0], "kernel_pid", None)
        assert warm_pid is not None
        output: list[str] = []

        def on_event(event: AgentEvent) -> None:
            if isinstance(event, ApprovalRequest) and not event.decided:
                event.approve(True)
            if isinstance(event, CodeExecutionOutputChunk) and event.agent_id != "main":
                output.append(event.text)

        events = await collect(parent, "delegate", on_event)
    assert ("task W", "done") in statuses(events)
    # The subagent's action ran in the kernel that was started before the task came (not a cold one).
    assert "".join(output).split() == ["warm", str(warm_pid)], output
