"""Local kernel executor figures: start time, first approved `!echo`, output loss and cell latency.

Run: python bench/exec.py [--json] [--cells N] [--starts N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from freeact_tui.execution.base import ExecApproval, ExecResult
from freeact_tui.execution.kernel import KernelExecutor


async def run_cell(executor: KernelExecutor, code: str) -> ExecResult:
    async for item in executor.stream(code):
        if isinstance(item, ExecApproval):
            await item.accept()
        elif isinstance(item, ExecResult):
            return item
    raise RuntimeError("stream ended without a result")


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


async def bench(cells: int, starts: int) -> dict[str, float | int]:
    start_s: list[float] = []
    first_echo_s: list[float] = []
    warm_echo_ms: list[float] = []
    warm_up_s: list[float] = []
    latencies_ms: list[float] = []
    lost = 0
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(starts):
            executor = KernelExecutor(working_dir=Path(tmp), images_dir=Path(tmp) / "images")
            began = time.perf_counter()
            await executor.start()
            start_s.append(time.perf_counter() - began)
            # Submitted the moment start() returns: waits for the background warm-up.
            began = time.perf_counter()
            result = await run_cell(executor, "!echo first")
            first_echo_s.append(time.perf_counter() - began)
            assert result.text == "first", result
            if executor.warm_up_seconds is not None:
                warm_up_s.append(executor.warm_up_seconds)
            if round_ == 0:
                for i in range(10):
                    began = time.perf_counter()
                    result = await run_cell(executor, f"!echo warm{i}")
                    warm_echo_ms.append((time.perf_counter() - began) * 1000)
                for i in range(cells):
                    began = time.perf_counter()
                    result = await run_cell(executor, f"print('cell-{i}')")
                    latencies_ms.append((time.perf_counter() - began) * 1000)
                    lost += result.text != f"cell-{i}"
            await executor.stop()
    return {
        "kernel_start_s": round(statistics.median(start_s), 3),
        "first_approved_echo_after_start_s": round(statistics.median(first_echo_s), 3),
        "warm_up_s": round(statistics.median(warm_up_s), 3) if warm_up_s else -1,
        "approved_echo_warm_ms": round(statistics.median(warm_echo_ms), 1),
        "cells": cells,
        "lost_outputs": lost,
        "cell_latency_median_ms": round(statistics.median(latencies_ms), 2),
        "cell_latency_p95_ms": round(p95(latencies_ms), 2),
        "starts": starts,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--cells", type=int, default=1000)
    parser.add_argument("--starts", type=int, default=3)
    args = parser.parse_args()
    figures = asyncio.run(bench(args.cells, args.starts))
    if args.json:
        print(json.dumps(figures))
        return
    print(f"kernel start (median of {figures['starts']}):      {figures['kernel_start_s']:.2f} s")
    print(
        f"first approved !echo after start():  {figures['first_approved_echo_after_start_s'] * 1000:.0f} ms"
    )
    print(f"  of which background warm-up:        {figures['warm_up_s'] * 1000:.0f} ms")
    print(f"approved !echo, warm kernel:         {figures['approved_echo_warm_ms']:.1f} ms (median of 10)")
    print(f"back-to-back cells:                  {figures['cells']}, lost outputs: {figures['lost_outputs']}")
    print(
        f"cell latency:                        median {figures['cell_latency_median_ms']:.1f} ms,"
        f" p95 {figures['cell_latency_p95_ms']:.1f} ms"
    )


if __name__ == "__main__":
    main()
