"""Streaming a long reply in small pieces: seconds per reply of 30, 120 and 360 KB sent in 20-character deltas.

Through ``Agent.stream()`` with a scripted model (``FunctionModel``), every event consumed as a front end
would; and, with ``--cli``, through the headless CLI (``freeact-tui run -o stream-json``) against the fake
OpenAI-compatible server of ``tests/fake_openai.py``. The work per delta must not grow with the reply:
the time per KB stays flat from 30 to 360 KB (``ratio``: seconds per KB at 360 KB / at 30 KB).
Run: ``python bench/stream_reply.py [--json] [--cli]``.
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
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from freeact_tui.agent.agent import Agent  # noqa: E402
from freeact_tui.events import Response, ResponseChunk  # noqa: E402
from freeact_tui.permissions.rules import PermissionRules  # noqa: E402

SIZES_KB = (30, 120, 360)
CHUNK = 20
RUNS = 3
LINE = "Some prose of the reply, with `code` and a number 42 in it; and more of it.\n"


def reply_text(kb: int) -> str:
    """A reply of ``kb`` KB: prose lines and a fenced block now and then (what a long answer looks like)."""
    out: list[str] = []
    size = 0
    i = 0
    while size < kb * 1000:
        piece = f"```text\nline {i}\n```\n" if i % 50 == 49 else LINE
        out.append(piece)
        size += len(piece)
        i += 1
    return "".join(out)


def model_for(text: str) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for i in range(0, len(text), CHUNK):
            yield text[i : i + CHUNK]

    return FunctionModel(stream_function=stream, model_name="long-reply")


async def sdk_seconds(kb: int) -> float:
    text = reply_text(kb)
    with tempfile.TemporaryDirectory() as tmp:
        agent = Agent(
            model_for(text),
            sessions_dir=Path(tmp) / "sessions",
            working_dir=Path(tmp),
            permissions=PermissionRules(None, defaults=False),
            enable_subagents=False,
            eager_kernel=False,
        )
        async with agent:
            started = time.perf_counter()
            chunks = 0
            final = ""
            async for event in agent.stream("write it all"):
                if isinstance(event, ResponseChunk):
                    chunks += 1
                elif isinstance(event, Response):
                    final = event.content
            seconds = time.perf_counter() - started
    assert final == text and chunks >= len(text) // CHUNK, (len(final), chunks)
    return seconds


def cli_seconds(kb: int) -> float:
    from tests.fake_openai import FakeOpenAI, Reply

    text = reply_text(kb)
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(default=Reply(text, chunk=CHUNK)) as server:
        env = {**os.environ, "FREEACT_TUI_HOME": str(Path(tmp) / "home")}
        argv = [sys.executable, "-m", "freeact_tui", "run", "--base-url", server.url, "--model", "fake"]
        started = time.perf_counter()
        done = subprocess.run(
            [*argv, "-o", "stream-json", "write it all"], cwd=tmp, env=env, capture_output=True, text=True
        )
        seconds = time.perf_counter() - started
    assert done.returncode == 0, done.stderr[-2000:]
    return seconds


async def main(with_cli: bool) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    per_kb: dict[str, list[float]] = {"sdk": [], "cli": []}
    for kb in SIZES_KB:
        sdk = statistics.median([await sdk_seconds(kb) for _ in range(RUNS)])
        figures[f"sdk_{kb}kb_s"] = round(sdk, 3)
        per_kb["sdk"].append(sdk / kb)
        if with_cli:
            cli = statistics.median([await asyncio.to_thread(cli_seconds, kb) for _ in range(RUNS)])
            figures[f"cli_{kb}kb_s"] = round(cli, 3)
            per_kb["cli"].append(cli / kb)
    for name, values in per_kb.items():
        if values:
            figures[f"{name}_ratio_per_kb_360_to_30"] = round(values[-1] / values[0], 2)
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--cli", action="store_true", help="also through the headless CLI and the fake server")
    args = parser.parse_args()
    result = asyncio.run(main(args.cli))
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:32} {value}")
