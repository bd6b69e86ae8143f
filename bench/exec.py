"""Kernel executor figures: start time, first approved `!echo`, output loss and cell latency.

Run: python bench/exec.py [--json] [--cells N] [--starts N] [--remote-tls]

``--remote-tls`` measures the remote mode instead: a local `jupyter kernelgateway` with a
self-signed certificate, a token and a base path (tests/tls_gateway.py), reached over https with
the CA bundle; approvals travel in-band.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from freeact_tui.execution.base import ExecApproval, ExecResult  # noqa: E402
from freeact_tui.execution.kernel import KernelExecutor  # noqa: E402
from freeact_tui.execution.remote import RemoteExecutor  # noqa: E402

Factory = Callable[[Path], KernelExecutor]


def local(tmp: Path) -> KernelExecutor:
    return KernelExecutor(working_dir=tmp, images_dir=tmp / "images")


@contextlib.contextmanager
def remote_tls() -> Iterator[Factory]:
    """A local TLS kernel gateway; the factory makes executors for it (token and CA from the environment)."""
    from tests.tls_gateway import tls_gateway

    token = secrets.token_hex(16)
    with tempfile.TemporaryDirectory() as tmp, tls_gateway(Path(tmp), token) as gateway:
        os.environ["JUPYTER_GATEWAY_AUTH_TOKEN"] = token
        os.environ["JUPYTER_GATEWAY_CA_CERTS"] = str(gateway.ca)
        try:
            yield lambda work: RemoteExecutor(
                remote_url=gateway.url, working_dir=work, images_dir=work / "images"
            )
        finally:
            del os.environ["JUPYTER_GATEWAY_AUTH_TOKEN"], os.environ["JUPYTER_GATEWAY_CA_CERTS"]


async def run_cell(executor: KernelExecutor, code: str) -> ExecResult:
    async for item in executor.stream(code):
        if isinstance(item, ExecApproval):
            await item.accept()
        elif isinstance(item, ExecResult):
            return item
    raise RuntimeError("stream ended without a result")


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


async def bench(cells: int, starts: int, factory: Factory = local) -> dict[str, float | int]:
    start_s: list[float] = []
    first_echo_s: list[float] = []
    warm_echo_ms: list[float] = []
    warm_up_s: list[float] = []
    latencies_ms: list[float] = []
    lost = 0
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(starts):
            executor = factory(Path(tmp))
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
    parser.add_argument(
        "--remote-tls", action="store_true", help="the remote mode over https (local gateway)"
    )
    args = parser.parse_args()
    if args.remote_tls:
        with remote_tls() as factory:
            figures = asyncio.run(bench(args.cells, args.starts, factory))
    else:
        figures = asyncio.run(bench(args.cells, args.starts))
    if args.json:
        print(json.dumps(figures))
        return
    print(f"kernel start (median of {figures['starts']}):      {figures['kernel_start_s']:.2f} s")
    print(
        f"first approved !echo after start():  {figures['first_approved_echo_after_start_s'] * 1000:.0f} ms"
    )
    if figures["warm_up_s"] >= 0:
        print(f"  of which background warm-up:        {figures['warm_up_s'] * 1000:.0f} ms")
    else:
        print("  (remote: the warm-up runs with the init code, inside kernel start)")
    print(f"approved !echo, warm kernel:         {figures['approved_echo_warm_ms']:.1f} ms (median of 10)")
    print(f"back-to-back cells:                  {figures['cells']}, lost outputs: {figures['lost_outputs']}")
    print(
        f"cell latency:                        median {figures['cell_latency_median_ms']:.1f} ms,"
        f" p95 {figures['cell_latency_p95_ms']:.1f} ms"
    )


if __name__ == "__main__":
    main()
