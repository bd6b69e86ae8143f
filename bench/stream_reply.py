"""Streaming a long reply in small pieces: seconds per reply of 30, 120 and 360 KB sent in N-character deltas.

Through ``Agent.stream()`` with a scripted model (``FunctionModel``), every event consumed as a front end
would; with ``--cli``, through the headless CLI (``freeact-tui run -o stream-json``) against the fake
OpenAI-compatible server of ``tests/fake_openai.py``; with ``--tui``, through the real app under
``run_test`` (the reply drawn in the conversation log, no kernel). The work per delta must not grow with
the reply: the time per KB stays flat from 30 to 360 KB (``ratio``: seconds per KB at 360 KB / at 30 KB).
Run: ``python bench/stream_reply.py [--json] [--cli] [--tui] [--delta N] [--sizes 30,120,360] [--runs 3]
[--one-paragraph | --paragraphs]``
(``--delta 4`` is the worst case of small deltas; 20 is the default).
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
from collections.abc import AsyncIterator, Callable
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
CHUNK = 20  # characters per delta (``--delta``)
RUNS = 3
LINE = "Some prose of the reply, with `code` and a number 42 in it; and more of it.\n"


ONE_PARAGRAPH = False
"""``--one-paragraph``: the reply is one paragraph ("word word …", no line breaks): its open block is the
whole reply, the worst case for re-drawing the block that grows."""


PARAGRAPHS = False
"""``--paragraphs``: every line of prose is a paragraph of its own (a blank line after it): the log gets a
block per line, the case where each new block once cost the whole screen (#40)."""


def reply_text(kb: int) -> str:
    """A reply of ``kb`` KB: prose lines and a fenced block now and then (what a long answer looks like),
    or one paragraph (``ONE_PARAGRAPH``)."""
    if ONE_PARAGRAPH:
        return ("word " * (kb * 200))[: kb * 1000]
    out: list[str] = []
    size = 0
    i = 0
    while size < kb * 1000:
        piece = f"```text\nline {i}\n```\n" if i % 50 == 49 else LINE
        if PARAGRAPHS:
            piece += "\n"
        out.append(piece)
        size += len(piece)
        i += 1
    return "".join(out)


def model_for(text: str, chunk: int) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for i in range(0, len(text), chunk):
            yield text[i : i + chunk]

    return FunctionModel(stream_function=stream, model_name="long-reply")


async def sdk_seconds(kb: int, chunk: int) -> float:
    text = reply_text(kb)
    with tempfile.TemporaryDirectory() as tmp:
        agent = Agent(
            model_for(text, chunk),
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
    assert final == text and chunks >= len(text) // chunk, (len(final), chunks)
    return seconds


async def _until(condition: Callable[[], bool], limit: float = 600.0, step: float = 0.01) -> None:
    deadline = time.perf_counter() + limit
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the reply did not finish in time")
        await asyncio.sleep(step)


async def tui_seconds(kb: int, chunk: int) -> float:
    """From Enter to the turn's end with the whole reply in the log (the real app, no kernel)."""
    from freeact_tui.project.config import Config
    from freeact_tui.tui.app import FreeactApp
    from freeact_tui.tui.widgets.blocks import ResponseBlock
    from freeact_tui.tui.widgets.prompt import PromptInput

    text = reply_text(kb)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        config = Config(sessions_dir=root / "sessions", working_dir=root, subagent_pool_size=0)
        app = FreeactApp(config, model=model_for(text, chunk), eager_kernel=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await _until(lambda: app.agent_ready)
            screen = app.main_screen
            screen.query_one(PromptInput).load_text("write it all")
            started = time.perf_counter()
            await pilot.press("enter")
            await _until(lambda: not screen.turn_running and bool(screen.conversation.query(ResponseBlock)))
            await pilot.pause()
            seconds = time.perf_counter() - started
            shown = screen.conversation.query(ResponseBlock).last().text
    assert shown == text, (len(shown), len(text))
    return seconds


def cli_seconds(kb: int, chunk: int) -> float:
    from tests.fake_openai import FakeOpenAI, Reply

    text = reply_text(kb)
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(default=Reply(text, chunk=chunk)) as server:
        env = {**os.environ, "FREEACT_TUI_HOME": str(Path(tmp) / "home")}
        argv = [sys.executable, "-m", "freeact_tui", "run", "--base-url", server.url, "--model", "fake"]
        started = time.perf_counter()
        done = subprocess.run(
            [*argv, "-o", "stream-json", "write it all"], cwd=tmp, env=env, capture_output=True, text=True
        )
        seconds = time.perf_counter() - started
    assert done.returncode == 0, done.stderr[-2000:]
    return seconds


async def main(
    with_cli: bool, with_tui: bool, chunk: int = CHUNK, sizes: tuple[int, ...] = SIZES_KB, runs: int = RUNS
) -> dict[str, Any]:
    figures: dict[str, Any] = {"delta_chars": chunk}
    per_kb: dict[str, list[float]] = {"sdk": [], "cli": [], "tui": []}
    for kb in sizes:
        sdk = statistics.median([await sdk_seconds(kb, chunk) for _ in range(runs)])
        figures[f"sdk_{kb}kb_s"] = round(sdk, 3)
        per_kb["sdk"].append(sdk / kb)
        if with_cli:
            cli = statistics.median([await asyncio.to_thread(cli_seconds, kb, chunk) for _ in range(runs)])
            figures[f"cli_{kb}kb_s"] = round(cli, 3)
            per_kb["cli"].append(cli / kb)
        if with_tui:
            tui = statistics.median([await tui_seconds(kb, chunk) for _ in range(runs)])
            figures[f"tui_{kb}kb_s"] = round(tui, 3)
            per_kb["tui"].append(tui / kb)
    for name, values in per_kb.items():
        if len(values) > 1:
            figures[f"{name}_ratio_per_kb_{sizes[-1]}_to_{sizes[0]}"] = round(values[-1] / values[0], 2)
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--cli", action="store_true", help="also through the headless CLI and the fake server"
    )
    parser.add_argument("--tui", action="store_true", help="also through the real app under run_test")
    parser.add_argument("--delta", type=int, default=CHUNK, help="characters per streamed delta (default 20)")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES_KB)), help="reply sizes in KB")
    parser.add_argument("--runs", type=int, default=RUNS, help="runs per figure (the median is printed)")
    parser.add_argument("--one-paragraph", action="store_true", help="the reply is one paragraph, no line breaks")
    parser.add_argument("--paragraphs", action="store_true", help="every line of the reply is a paragraph")
    args = parser.parse_args()
    ONE_PARAGRAPH = args.one_paragraph
    PARAGRAPHS = args.paragraphs
    sizes = tuple(int(kb) for kb in args.sizes.split(","))
    result = asyncio.run(main(args.cli, args.tui, max(1, args.delta), sizes, max(1, args.runs)))
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:32} {value}")
