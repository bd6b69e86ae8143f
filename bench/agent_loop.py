"""Agent loop overhead: time per step spent in the loop itself, excluding model and kernel time.

A scripted model asks for a trivial action (``x = 1``) N times; the model's stream function and the
executor's ``stream()`` are timed, and what remains of the turn's wall time is the loop's overhead
(event plumbing, approvals by rule, history, persistence). Target: <= 5 ms per step.
Run: ``python bench/agent_loop.py [--json]``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _report import run_bench  # noqa: E402  (bench/ is on the path when a script runs)

from freeact_tui.agent.agent import Agent  # noqa: E402
from freeact_tui.execution.base import ExecItem  # noqa: E402
from freeact_tui.execution.kernel.executor import KernelExecutor  # noqa: E402
from freeact_tui.permissions.rules import PermissionRules  # noqa: E402

STEPS = 50
RUNS = 5


class TimedExecutor:
    """Delegates to a real executor and adds up the time spent inside ``stream()``."""

    def __init__(self, inner: KernelExecutor) -> None:
        self.inner = inner
        self.spent = 0.0

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    async def stream(self, code: str, timeout: float | None = None) -> AsyncIterator[ExecItem]:  # noqa: ASYNC109
        t0 = time.perf_counter()
        async for item in self.inner.stream(code, timeout):
            self.spent += time.perf_counter() - t0
            yield item
            t0 = time.perf_counter()
        self.spent += time.perf_counter() - t0


async def one_run(executor: TimedExecutor, sessions: Path) -> float:
    model_time = 0.0
    calls = 0

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        nonlocal model_time, calls
        t0 = time.perf_counter()
        calls += 1
        if calls <= STEPS:
            item: object = {
                0: DeltaToolCall(
                    name="ipybox_execute_ipython_cell",
                    json_args='{"code": "x = 1"}',
                    tool_call_id=f"c{calls}",
                )
            }
        else:
            item = "done"
        model_time += time.perf_counter() - t0
        yield item

    executor.spent = 0.0
    agent = Agent(
        FunctionModel(stream_function=stream, model_name="bench"),
        sessions_dir=sessions,
        executor=executor,  # type: ignore[arg-type]
        permissions=PermissionRules(None, skip_permissions=True),
        enable_subagents=False,
    )
    async with agent:
        t0 = time.perf_counter()
        async for _ in agent.stream("go"):
            pass
        wall = time.perf_counter() - t0
    return (wall - model_time - executor.spent) / (STEPS + 1)


async def main() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        inner = KernelExecutor(working_dir=Path(tmp))
        await inner.start()
        try:
            executor = TimedExecutor(inner)
            await one_run(executor, Path(tmp) / "warmup")
            overheads = [await one_run(executor, Path(tmp) / f"s{i}") for i in range(RUNS)]
        finally:
            await inner.stop()
    return {
        "steps_per_run": STEPS,
        "runs": RUNS,
        "loop_overhead_ms_per_step_median": round(statistics.median(overheads) * 1000, 3),
        "loop_overhead_ms_per_step_max": round(max(overheads) * 1000, 3),
    }


if __name__ == "__main__":
    run_bench(__doc__, main)
