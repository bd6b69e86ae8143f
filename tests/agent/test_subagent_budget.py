"""#40 (hostile tester): a subagent called again and again was outside the turn's bound — the parent
delegated the same task each step, the subagent answered a new random word each time: 200 requests
(100 + 100). A subagent's requests are the parent turn's (``agent/turn/budget.py``) and the same task
again is the same step (``agent/policy/progress.py``). Scripted model, real kernels."""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from freeact_tui.agent.policy.progress import DEFAULT_STALL_LIMIT
from freeact_tui.events import AgentError
from freeact_tui.execution.kernel.executor import KernelExecutor
from tests.helpers import collect, first_prompt, make_parent, of

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def executor(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[KernelExecutor]:
    ex = KernelExecutor(working_dir=tmp_path_factory.mktemp("parent"))
    await ex.start()
    yield ex
    await ex.stop()


def delegating(task_for: itertools.count[int] | None) -> tuple[FunctionModel, list[str]]:
    """The parent delegates a task on every step (the same one, or with ``task_for`` a new one each
    time); each subagent answers a random word at once. Returns the model and the prompts it was asked."""
    asked: list[str] = []
    ids = itertools.count()

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        prompt = first_prompt(messages)
        asked.append(prompt)
        if prompt == "go":
            task = "Say one random word." if task_for is None else f"Say word number {next(task_for)}."
            args = json.dumps({"prompt": task, "max_turns": 100})
            yield {0: DeltaToolCall(name="subagent_task", json_args=args, tool_call_id=f"s{next(ids)}")}
        else:
            yield "".join(random.choice("abcdefghij") for _ in range(8))

    return FunctionModel(stream_function=stream, model_name="delegating"), asked


async def test_the_same_task_delegated_again_ends_on_the_progress_bound(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    model, asked = delegating(None)
    async with make_parent(model, executor, tmp_path, max_model_requests=40) as parent:
        events = await collect(parent, "go")
    assert [e.kind for e in of(events, AgentError) if e.agent_id == "main"] == ["stalled"]
    parent_requests = asked.count("go")
    assert parent_requests <= 1 + DEFAULT_STALL_LIMIT, parent_requests
    assert len(asked) <= 2 * (1 + DEFAULT_STALL_LIMIT), len(asked)


async def test_a_subagents_requests_are_spent_from_the_parent_turns_budget(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    """New tasks each time (progress by the rules): the turn's one budget ends it, subagents included."""
    model, asked = delegating(itertools.count())
    async with make_parent(model, executor, tmp_path, max_model_requests=7) as parent:
        events = await collect(parent, "go")
    assert [e.kind for e in of(events, AgentError) if e.agent_id == "main"] == ["limit"]
    assert len(asked) <= 7, asked
