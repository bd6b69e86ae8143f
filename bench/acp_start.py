"""ACP start-up: how long an editor waits after spawning ``freeact-tui acp``.

Figures (medians of RUNS spawns, each in a fresh empty folder and home): spawn → the ``initialize``
answer (what an editor waits for before it shows the agent), and spawn → the ``session/new`` answer
(the agent's modules loaded, a session open with the offline demo model; its kernel starts in the
background). The client is a plain pipe writing JSON-RPC lines, so nothing but the agent is measured.
Run: ``python bench/acp_start.py [--json]`` (under a minute).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._report import run_bench  # noqa: E402

RUNS = 5


async def _answer(proc: asyncio.subprocess.Process, request_id: int) -> dict[str, Any]:
    assert proc.stdout is not None
    while True:
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        if not line:
            raise RuntimeError("the agent closed its stdout")
        message = json.loads(line)
        if message.get("id") == request_id:
            return dict(message)


async def _send(
    proc: asyncio.subprocess.Process, request_id: int, method: str, params: dict[str, Any]
) -> None:
    assert proc.stdin is not None
    proc.stdin.write(
        json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode() + b"\n"
    )
    await proc.stdin.drain()


async def one_start() -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        env = {**os.environ, "PYTHONPATH": str(ROOT), "FREEACT_TUI_HOME": str(Path(tmp) / "home")}
        start = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "freeact_tui", "--model", "demo", "acp",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            cwd=work, env=env,
        )  # fmt: skip
        try:
            await _send(proc, 1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
            await _answer(proc, 1)
            initialized = time.perf_counter() - start
            await _send(proc, 2, "session/new", {"cwd": str(work), "mcpServers": []})
            answer = await _answer(proc, 2)
            if "error" in answer:
                raise RuntimeError(f"session/new failed: {answer['error']}")
            opened = time.perf_counter() - start
        finally:
            assert proc.stdin is not None
            proc.stdin.close()  # the agent stops its kernel and exits
            try:
                await asyncio.wait_for(proc.wait(), 30)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        return initialized, opened


async def main() -> dict[str, Any]:
    starts = [await one_start() for _ in range(RUNS)]
    return {
        "runs": RUNS,
        "initialize_answer_s": round(statistics.median(s[0] for s in starts), 3),
        "session_new_answer_s": round(statistics.median(s[1] for s in starts), 3),
    }


if __name__ == "__main__":
    run_bench(__doc__.splitlines()[0], main)
