"""ACP overhead: ``freeact-tui acp`` (a subprocess, JSON-RPC over pipes) against the in-process SDK.

The same fake OpenAI server on 127.0.0.1 streams the same reply (CHUNKS text deltas) to both: the
SDK's ``Agent.stream()`` in this process, and ``freeact-tui acp`` driven by the ACP SDK's client.
Figures (medians of RUNS prompts each): prompt → first ``agent_message_chunk`` (first
``ResponseChunk`` in process), the time per streamed update, and their differences (the protocol's
overhead), plus the time from spawning the server to its ``initialize`` answer.
Run: ``python bench/acp_overhead.py [--json]`` (under a minute).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from acp import spawn_agent_process, text_block  # noqa: E402
from acp.schema import RequestPermissionResponse  # noqa: E402

from bench._report import run_bench  # noqa: E402
from freeact_tui.agent.agent import Agent  # noqa: E402
from freeact_tui.events import ResponseChunk  # noqa: E402
from freeact_tui.project.config import Config  # noqa: E402
from tests.fake_openai import FakeOpenAI, Reply  # noqa: E402

RUNS = 7
CHUNKS = 100
REPLY = Reply("x" * (4 * CHUNKS), chunk=4)


class TimingClient:
    """Notes when each agent_message_chunk arrives."""

    def __init__(self) -> None:
        self.times: list[float] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if getattr(update, "session_update", "") == "agent_message_chunk":
            self.times.append(time.perf_counter())

    async def request_permission(self, *args: Any, **kwargs: Any) -> RequestPermissionResponse:
        raise RuntimeError("the bench runs no action")


def _figures(started: float, times: list[float]) -> tuple[float, float]:
    """(ms to the first chunk, ms per chunk after it)."""
    return (times[0] - started) * 1000, (times[-1] - times[0]) * 1000 / max(len(times) - 1, 1)


async def in_process(server: FakeOpenAI, home: Path) -> tuple[list[float], list[float]]:
    config = Config(model="fake-model", base_url=server.url, sessions_dir=home / "sessions",
                    working_dir=home, subagent_pool_size=0, checkpoints=False)  # fmt: skip
    firsts, per = [], []
    async with Agent.from_config(config, eager_kernel=False) as agent:
        for _ in range(RUNS + 1):  # the first run warms up (imports, connection)
            server.script(REPLY)
            times: list[float] = []
            started = time.perf_counter()
            async for event in agent.stream("go"):
                if isinstance(event, ResponseChunk):
                    times.append(time.perf_counter())
            first, each = _figures(started, times)
            firsts.append(first)
            per.append(each)
    return firsts[1:], per[1:]


async def over_acp(server: FakeOpenAI, home: Path) -> tuple[list[float], list[float], float]:
    config = home / "acp.toml"
    config.write_text("subagent_pool_size = 0\ncheckpoints = false\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [
        "-m",
        "freeact_tui",
        "--base-url",
        server.url,
        "--model",
        "fake-model",
        "--config",
        str(config),
        "acp",
    ]
    client = TimingClient()
    spawned = time.perf_counter()
    async with spawn_agent_process(client, sys.executable, *args, env=env, cwd=home,
                                   transport_kwargs={"shutdown_timeout": 30}) as (conn, _):  # fmt: skip
        await conn.initialize(protocol_version=1)
        startup = (time.perf_counter() - spawned) * 1000
        session = await conn.new_session(cwd=str(home), mcp_servers=[])
        await asyncio.sleep(8)  # the session's kernel starts in the background: let it settle first
        firsts, per = [], []
        for _ in range(RUNS + 1):
            server.script(REPLY)
            client.times = []
            started = time.perf_counter()
            await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
            first, each = _figures(started, client.times)
            firsts.append(first)
            per.append(each)
    return firsts[1:], per[1:], startup


async def main() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as server:
        home = Path(tmp)
        os.environ["FREEACT_TUI_HOME"] = str(home / "home")
        sdk_first, sdk_each = await in_process(server, home)
        acp_first, acp_each, startup = await over_acp(server, home)
    med = statistics.median
    return {
        "runs": RUNS,
        "chunks_per_reply": CHUNKS,
        "acp_startup_ms": round(startup, 1),
        "sdk_first_chunk_ms": round(med(sdk_first), 2),
        "acp_first_chunk_ms": round(med(acp_first), 2),
        "first_chunk_overhead_ms": round(med(acp_first) - med(sdk_first), 2),
        "sdk_per_update_ms": round(med(sdk_each), 3),
        "acp_per_update_ms": round(med(acp_each), 3),
        "per_update_overhead_ms": round(med(acp_each) - med(sdk_each), 3),
    }


if __name__ == "__main__":
    run_bench(__doc__.splitlines()[0], main)
