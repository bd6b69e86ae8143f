"""Headless ``run`` time per streamed delta, beside the openai SDK's and pydantic-ai's own time per delta.

One reply of N KB streamed by the fake OpenAI-compatible server (``tests/fake_openai.py``) in deltas of
``--delta`` characters (4: the worst case of small deltas), read three ways, each the median of ``--runs``:

- ``openai``: the openai SDK alone (``AsyncOpenAI`` streaming, every chunk read);
- ``pydantic_ai``: pydantic-ai's model stream over that SDK (what the app reads from);
- ``agent``: the app's agent layer in this process (``Agent.stream``, every event read);
- ``headless``: ``freeact-tui run -o json`` in a subprocess, less its start-up and end (the same run on a
  reply of one delta), so that what is left is the reply's streaming (noisy on a loaded machine: the
  start-up's spread is seconds).

The figures are microseconds per delta; ``app`` is agent less pydantic_ai: the app's own work per
delta. Its cost is O(1) per delta when ``app_us`` stays flat as the reply grows (``app_ratio``: app_us at
the largest size over the smallest).
Run: ``python bench/headless_delta.py [--json] [--delta 4] [--sizes 8,32,128] [--runs 3] [--no-headless]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fake_openai import FakeOpenAI, Reply  # noqa: E402

SIZES_KB = (8, 32, 128)
DELTA = 4
RUNS = 3
LINE = "Some prose of the reply, with `code` and a number 42 in it; and more of it.\n"


def reply_text(kb: int) -> str:
    return (LINE * (kb * 1000 // len(LINE) + 1))[: kb * 1000]


async def openai_seconds(server: FakeOpenAI) -> float:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=server.url, api_key="x", max_retries=0)
    started = time.perf_counter()
    stream = await client.chat.completions.create(
        model="fake", messages=[{"role": "user", "content": "go"}], stream=True
    )
    async for _ in stream:
        pass
    seconds = time.perf_counter() - started
    await client.close()
    return seconds


async def pydantic_ai_seconds(server: FakeOpenAI) -> float:
    from pydantic_ai.messages import ModelRequest, UserPromptPart
    from pydantic_ai.models import ModelRequestParameters

    from freeact_tui.agent.models import resolve_model

    model = resolve_model("fake", base_url=server.url)
    started = time.perf_counter()
    async with model.request_stream(
        [ModelRequest(parts=[UserPromptPart("go")])], None, ModelRequestParameters()
    ) as stream:
        async for _ in stream:
            pass
    return time.perf_counter() - started


async def agent_seconds(server: FakeOpenAI) -> float:
    """The app's agent layer in this process (``Agent.stream``, every event read as a front end would):
    what the headless run does per delta, without a subprocess's start-up noise."""
    from freeact_tui.agent.agent import Agent
    from freeact_tui.agent.models import resolve_model
    from freeact_tui.permissions.rules import PermissionRules

    with tempfile.TemporaryDirectory() as tmp:
        agent = Agent(
            resolve_model("fake", base_url=server.url),
            sessions_dir=Path(tmp) / "sessions",
            working_dir=Path(tmp),
            permissions=PermissionRules(None, defaults=False),
            enable_subagents=False,
            eager_kernel=False,
        )
        async with agent:
            started = time.perf_counter()
            async for _ in agent.stream("go"):
                pass
            return time.perf_counter() - started


def headless_seconds(server: FakeOpenAI) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "FREEACT_TUI_HOME": str(Path(tmp) / "home")}
        argv = [sys.executable, "-m", "freeact_tui", "run", "--base-url", server.url, "--model", "fake"]
        started = time.perf_counter()
        done = subprocess.run([*argv, "-o", "json", "go"], cwd=tmp, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - started
    assert done.returncode == 0, done.stderr[-2000:]
    return seconds


def median(runs: int, server: FakeOpenAI, reply: Reply, measure: Any) -> float:
    times = []
    for _ in range(runs):
        server.reset()
        server.default = reply
        result = measure(server)
        times.append(asyncio.run(result) if asyncio.iscoroutine(result) else result)
    return statistics.median(times)


def main(delta: int, sizes: tuple[int, ...], runs: int, headless: bool) -> dict[str, Any]:
    figures: dict[str, Any] = {"delta_chars": delta}
    app: list[float] = []
    with FakeOpenAI() as server:
        base = median(runs, server, Reply("x", chunk=delta), headless_seconds) if headless else 0.0
        if headless:
            figures["headless_start_and_end_s"] = round(base, 3)  # subtracted from each headless run
        for kb in sizes:
            reply = Reply(reply_text(kb), chunk=delta)
            deltas = kb * 1000 // delta
            per = {
                "openai": median(runs, server, reply, openai_seconds),
                "pydantic_ai": median(runs, server, reply, pydantic_ai_seconds),
                "agent": median(runs, server, reply, agent_seconds),
            }
            if headless:
                per["headless"] = median(runs, server, reply, headless_seconds) - base
            for name, seconds in per.items():
                figures[f"{name}_{kb}kb_us_per_delta"] = round(seconds / deltas * 1e6, 1)
            own = (per["agent"] - per["pydantic_ai"]) / deltas
            figures[f"app_{kb}kb_us_per_delta"] = round(own * 1e6, 1)
            app.append(own)
    if len(app) > 1 and app[0] > 0:
        figures[f"app_ratio_{sizes[-1]}kb_to_{sizes[0]}kb"] = round(app[-1] / app[0], 2)
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--delta", type=int, default=DELTA, help="characters per streamed delta (default 4)")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES_KB)), help="reply sizes in KB")
    parser.add_argument("--runs", type=int, default=RUNS, help="runs per figure (the median is printed)")
    parser.add_argument("--no-headless", action="store_true", help="only the in-process layers (no subprocess)")
    args = parser.parse_args()
    sizes = tuple(int(kb) for kb in args.sizes.split(","))
    result = main(max(1, args.delta), sizes, max(1, args.runs), not args.no_headless)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:36} {value}")
