"""Subagent start-up: time from a ``subagent_task`` call to the subagent's first executed action,
with and without the warm kernel pool, and the memory of one subagent kernel.

Target: first action within 0.5 s with the warm pool (a cold ipybox kernel takes ~3 s here).
Run: ``python bench/subagents.py [--json]``.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import psutil
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _report import run_bench  # noqa: E402  (bench/ is on the path when a script runs)

from freeact_tui.agent.agent import Agent  # noqa: E402
from freeact_tui.events import ApprovalRequest, CodeExecutionOutput  # noqa: E402
from freeact_tui.execution.kernel.executor import KernelExecutor  # noqa: E402
from freeact_tui.permissions.rules import PermissionRules  # noqa: E402
from freeact_tui.toolcalls import SubagentTask  # noqa: E402

RUNS = 2


def model() -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        first = messages[0]
        prompt = (
            next(p.content for p in first.parts if isinstance(p, UserPromptPart))
            if isinstance(first, ModelRequest)
            else ""
        )
        done = isinstance(messages[-1], ModelRequest) and any(
            isinstance(p, ToolReturnPart) for p in messages[-1].parts
        )
        if done:
            yield "done"
        elif prompt == "delegate":
            yield {0: DeltaToolCall(name="subagent_task", json_args='{"prompt": "sub"}', tool_call_id="t1")}
        else:
            yield {
                0: DeltaToolCall(
                    name="ipybox_execute_ipython_cell", json_args='{"code": "print(1)"}', tool_call_id="s1"
                )
            }

    return FunctionModel(stream_function=stream, model_name="bench")


async def first_action_latency(
    parent_executor: KernelExecutor, pool_size: int, tmp: Path
) -> tuple[float, float]:
    """(seconds from the approved subagent_task to its first executed action, kernel RSS in MB)."""
    agent = Agent(
        model(),
        executor=parent_executor,
        working_dir=tmp,
        permissions=PermissionRules(None, skip_permissions=True),
        subagent_pool_size=pool_size,
    )
    async with agent:
        if pool_size:
            assert agent._subagents is not None
            # let the pool warm up, as it does while a user types
            while agent._subagents.pool.ready_count < pool_size:  # noqa: ASYNC110
                await asyncio.sleep(0.05)
        before = {p.pid for p in psutil.Process().children(recursive=True)}
        t0 = 0.0
        latency = 0.0
        rss = 0.0
        async for event in agent.stream("delegate"):
            if isinstance(event, ApprovalRequest) and isinstance(event.tool_call, SubagentTask):
                t0 = time.perf_counter()
            if isinstance(event, CodeExecutionOutput) and event.agent_id != "main" and not latency:
                latency = time.perf_counter() - t0
                kernels = [
                    p
                    for p in psutil.Process().children(recursive=True)
                    if "ipykernel" in " ".join(p.cmdline()) and p.pid not in before
                ]
                rss = sum(p.memory_info().rss for p in kernels) / 2**20 if kernels else 0.0
    return latency, rss


async def main() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        parent = KernelExecutor(working_dir=Path(tmp))
        await parent.start()
        try:
            cold = [await first_action_latency(parent, 0, Path(tmp)) for _ in range(RUNS)]
            warm = [await first_action_latency(parent, 1, Path(tmp)) for _ in range(RUNS)]
        finally:
            await parent.stop()
    kernel_mb = [r for _, r in cold + warm if r]
    return {
        "runs": RUNS,
        "first_action_cold_s_median": round(statistics.median(t for t, _ in cold), 3),
        "first_action_warm_pool_s_median": round(statistics.median(t for t, _ in warm), 3),
        "subagent_kernel_rss_mb_median": round(statistics.median(kernel_mb), 1) if kernel_mb else 0.0,
    }


if __name__ == "__main__":
    run_bench(__doc__, main)
