"""The seed's older API (CodeActAgent.run → turn.stream()/response()) over the new Agent, real kernel."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from freeact_tui.compat import (
    CodeActAgent,
    CodeActModelTurn,
    CodeExecution,
    CodeExecutionResult,
    MaxStepsReached,
)
from freeact_tui.execution.kernel.executor import KernelExecutor
from tests.scripted import Code, script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def executor(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[KernelExecutor]:
    work = tmp_path_factory.mktemp("compat")
    ex = KernelExecutor(working_dir=work, images_dir=work / "images")
    await ex.start()
    yield ex
    await ex.stop()


async def test_stream_yields_model_turns_and_executions(executor: KernelExecutor) -> None:
    s = script(["Let me run it.", Code("!echo from-shell\nprint(2 ** 10)")], ["It is 1024."])
    agent = CodeActAgent(s.model(), executor)
    turn = agent.run("what is 2**10?", max_steps=5, step_timeout=30)
    kinds: list[str] = []
    async for item in turn.stream():
        match item:
            case CodeActModelTurn():
                chunks = [c async for c in item.stream()]
                response = await item.response()
                assert "".join(chunks) == response.text
                kinds.append(f"model:{response.text}:{response.code}")
            case CodeExecution():
                result = await item.result()
                assert isinstance(result, CodeExecutionResult)
                assert result.text == "from-shell\n1024" and not result.is_error  # shell auto-approved
                kinds.append("exec")
    assert kinds == [
        "model:Let me run it.:!echo from-shell\nprint(2 ** 10)",
        "exec",
        "model:It is 1024.:None",
    ]
    assert (await turn.response()).text == "It is 1024."


async def test_response_alone_and_state_across_runs(executor: KernelExecutor) -> None:
    s = script([Code("y = 5")], ["set"], [Code("print(y * 2)", call_id="c2")], ["ten"])
    agent = CodeActAgent(s.model(), executor)
    assert (await agent.run("set y").response()).text == "set"
    assert (await agent.run("double y").response()).text == "ten"
    assert s.last_tool_return() == "10"
    assert len(s.requests[-1]) == 7  # the second run saw the first run's history


async def test_max_steps_reached(executor: KernelExecutor) -> None:
    s = script([Code("print(1)")], [Code("print(2)", call_id="c2")], ["never"])
    turn = CodeActAgent(s.model(), executor).run("loop", max_steps=1)
    with pytest.raises(MaxStepsReached):
        await turn.response()


async def test_error_result_is_marked(executor: KernelExecutor) -> None:
    s = script([Code("1 / 0")], ["oops"])
    turn = CodeActAgent(s.model(), executor).run("divide")
    results = [await item.result() async for item in turn.stream() if isinstance(item, CodeExecution)]
    assert results[0].is_error and "ZeroDivisionError" in (results[0].text or "")
