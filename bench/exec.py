"""Kernel executor figures: start time, first approved `!echo`, output loss and cell latency.

Run: python bench/exec.py [--json] [--cells N] [--starts N] [--remote-tls [--gateway KIND]]

``--remote-tls`` measures the remote mode instead: a local gateway with a certificate from a test
CA, a token and a base path (tests/tls_gateway.py), reached over https with the CA bundle;
approvals travel in-band. ``--gateway`` picks it: ``kernel-gateway`` (stock `jupyter kernelgateway`,
the default), ``enterprise-gateway`` (stock `jupyter enterprisegateway` 3.3.0, kernels as local
processes) or ``enterprise-gateway-docker`` (EG starting each kernel in a container of a locally
built image, tests/eg_kernel_image.py; needs Docker). The 1-minute load average before and after
is printed with the figures.
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from freeact_tui.execution.base import ExecApproval, ExecResult  # noqa: E402
from freeact_tui.execution.gateway.remote import RemoteExecutor  # noqa: E402
from freeact_tui.execution.kernel.executor import KernelExecutor  # noqa: E402

Factory = Callable[[Path], KernelExecutor]


def local(tmp: Path) -> KernelExecutor:
    return KernelExecutor(working_dir=tmp, images_dir=tmp / "images")


GATEWAYS = ("kernel-gateway", "enterprise-gateway", "enterprise-gateway-docker")


@contextlib.contextmanager
def remote_tls(kind: str = "kernel-gateway") -> Iterator[Factory]:
    """A local TLS gateway; the factory makes executors for it (token and CA from the environment)."""
    from tests.tls_gateway import Gateway, tls_gateway

    token = secrets.token_hex(16)
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        gateway: Gateway
        if kind == "enterprise-gateway-docker":
            from tests.eg_kernel_image import docker_enterprise_gateway

            gateway = stack.enter_context(docker_enterprise_gateway(tmp, token, "freeact-eg-kernel:bench"))
        else:
            gateway = stack.enter_context(tls_gateway(tmp, token, kind=kind))
        os.environ["JUPYTER_GATEWAY_AUTH_TOKEN"] = token
        os.environ["JUPYTER_GATEWAY_CA_CERTS"] = str(gateway.ca)
        # A container has the image's file system: its /tmp, not ours.
        in_container = kind == "enterprise-gateway-docker"
        try:
            yield lambda work: RemoteExecutor(
                remote_url=gateway.url,
                working_dir=Path("/tmp") if in_container else work,
                images_dir=work / "images",
                kernel_init_timeout=180 if in_container else 30,
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


async def bench(cells: int, starts: int, factory: Factory = local) -> dict[str, Any]:
    start_s: list[float] = []
    first_echo_s: list[float] = []
    warm_echo_ms: list[float] = []
    warm_up_s: list[float] = []
    latencies_ms: list[float] = []
    lost = 0
    mismatches: list[str] = []
    load_before = os.getloadavg()[0]
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
                    if result.text != f"cell-{i}":
                        lost += 1
                        mismatches.append(f"cell-{i}: {result.text!r}"[:300])
            await executor.stop()
    return {
        "kernel_start_s": round(statistics.median(start_s), 3),
        "first_approved_echo_after_start_s": round(statistics.median(first_echo_s), 3),
        "warm_up_s": round(statistics.median(warm_up_s), 3) if warm_up_s else -1,
        "approved_echo_warm_ms": round(statistics.median(warm_echo_ms), 1),
        "cells": cells,
        "lost_outputs": lost,
        "lost_examples": mismatches[:3],
        "cell_latency_median_ms": round(statistics.median(latencies_ms), 2),
        "cell_latency_p95_ms": round(p95(latencies_ms), 2),
        "starts": starts,
        "load_avg_1m_before": round(load_before, 2),
        "load_avg_1m_after": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--cells", type=int, default=1000)
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument(
        "--remote-tls", action="store_true", help="the remote mode over https (local gateway)"
    )
    parser.add_argument("--gateway", choices=GATEWAYS, default=GATEWAYS[0], help="with --remote-tls")
    args = parser.parse_args()
    if args.remote_tls:
        with remote_tls(args.gateway) as factory:
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
    for example in figures["lost_examples"]:
        print(f"  {example}")
    print(
        f"cell latency:                        median {figures['cell_latency_median_ms']:.1f} ms,"
        f" p95 {figures['cell_latency_p95_ms']:.1f} ms"
    )
    print(
        f"load average (1 min):                {figures['load_avg_1m_before']:.2f} before,"
        f" {figures['load_avg_1m_after']:.2f} after"
    )


if __name__ == "__main__":
    main()
