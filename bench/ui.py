"""UI benchmarks (headless): launch time, markdown streaming throughput, key latency while streaming, memory.

Run: ``python bench/ui.py`` (``--json`` prints one JSON object). Targets: launch ≤ 1.0 s to a prompt
accepting keys, ≥ 20,000 chars/s of streamed markdown with code fences, key-to-screen p95 ≤ 50 ms
while streaming, ≤ 400 MB after a 500-turn conversation (460 resumed from the store, the last 40
run live through the agent and the UI).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from textual import events

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _report import run_bench  # noqa: E402  (bench/ is on the path when a script runs)

from freeact_tui.execution.kernel.executor import KernelExecutor  # noqa: E402
from freeact_tui.project.config import Config  # noqa: E402
from freeact_tui.store.sessions import SessionStore  # noqa: E402
from freeact_tui.tui.app import FreeactApp  # noqa: E402
from freeact_tui.tui.widgets.blocks import ResponseBlock  # noqa: E402
from freeact_tui.tui.widgets.prompt import PromptInput  # noqa: E402

SIZE = (120, 40)
RUNS = 3


_PARAGRAPH = (
    "The function reads the file in chunks so that memory stays flat, then counts the words of each "
    "chunk and keeps a running total. It handles **empty files** and files without a trailing newline, "
    "and it reports the time it took with `time.perf_counter()`, which is monotonic and precise enough "
    "for this purpose. See the [docs](https://docs.python.org/3/library/time.html) for details.\n\n"
)
_FENCE = (
    "```python\nimport time\n\n\ndef count_words(path: str, chunk: int = 1 << 16) -> int:\n"
    "    total = 0\n    with open(path, encoding='utf-8') as fh:\n        while block := fh.read(chunk):\n"
    "            total += len(block.split())  # approximate at chunk borders\n    return total\n```\n\n"
)


def _markdown(chars: int) -> str:
    """An LLM-like answer: headings, paragraphs, a list and a code fence per section."""
    section = "## Counting words\n\n" + _PARAGRAPH * 2 + "- fast\n- exact enough\n\n" + _FENCE + _PARAGRAPH
    return (section * (chars // len(section) + 1))[:chars]


def _model(chunks: list[str], delay: float = 0.0, gate: asyncio.Event | None = None) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for chunk in chunks:
            if gate is not None and gate.is_set():
                return
            if delay:
                await asyncio.sleep(delay)
            yield chunk

    return FunctionModel(stream_function=stream, model_name="bench")


def _config(root: Path, **settings: Any) -> Config:
    root.mkdir(parents=True, exist_ok=True)
    return Config(sessions_dir=root / "sessions", working_dir=root, **settings)


def _steady(root: Path) -> Config:
    """Steady state: the shared kernel only (no warm subagent kernel starting meanwhile)."""
    return _config(root, subagent_pool_size=0)


async def _until(condition: Callable[[], bool], limit: float = 30.0, step: float = 0.001) -> None:
    deadline = time.perf_counter() + limit
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("benchmark condition not reached")
        await asyncio.sleep(step)


async def bench_launch(root: Path) -> float:
    """Seconds from start to a prompt that has taken a key (the kernel starts in the background)."""
    app = FreeactApp(_config(root), model=_model(["ok"]))
    start = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        await _until(lambda: app.agent_ready)
        prompt = app.main_screen.query_one(PromptInput)
        await _until(lambda: prompt.has_focus)
        await pilot.press("x")
        await _until(lambda: prompt.text == "x")
        elapsed = time.perf_counter() - start
    return elapsed


async def bench_stream(root: Path, executor: KernelExecutor, chars: int = 60_000) -> float:
    """Characters per second of a streamed markdown response with code fences, rendered to the end."""
    text = _markdown(chars)
    chunks = [text[i : i + 24] for i in range(0, len(text), 24)]
    app = FreeactApp(_steady(root), model=_model(chunks), executor=executor)
    async with app.run_test(size=SIZE) as pilot:
        await _until(lambda: app.agent_ready)
        screen = app.main_screen
        screen.query_one(PromptInput).load_text("go")
        start = time.perf_counter()
        await pilot.press("enter")
        done = lambda: not screen.turn_running and bool(screen.conversation.query(ResponseBlock))  # noqa: E731
        await _until(done, limit=50)
        await pilot.pause()
        elapsed = time.perf_counter() - start
    return chars / elapsed


async def bench_key_latency(root: Path, executor: KernelExecutor, keys: int = 40) -> list[float]:
    """Milliseconds from a key event to the next screen refresh showing it, while a response streams."""
    stop = asyncio.Event()
    chunks = [c for c in _markdown(400_000)]
    chunks = ["".join(chunks[i : i + 8]) for i in range(0, len(chunks), 8)]
    app = FreeactApp(_steady(root), model=_model(chunks, delay=0.002, gate=stop), executor=executor)
    latencies: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        await _until(lambda: app.agent_ready)
        screen = app.main_screen
        prompt = screen.query_one(PromptInput)
        prompt.load_text("stream")
        await pilot.press("enter")
        await _until(lambda: screen.turn_running)
        await asyncio.sleep(0.5)  # let the stream get going
        for index in range(keys):
            char = "abcdefghij"[index % 10]
            before = prompt.text
            shown = asyncio.Event()
            start = time.perf_counter()
            app.post_message(events.Key(char, char))
            await _until(lambda b=before: prompt.text != b, limit=5)  # type: ignore[misc]
            prompt.call_after_refresh(shown.set)
            await asyncio.wait_for(shown.wait(), 5)
            latencies.append((time.perf_counter() - start) * 1000)
            await asyncio.sleep(0.02)
        stop.set()
        screen.action_cancel_turn()
        await _until(lambda: not screen.turn_running)
    return latencies


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


async def bench_memory(
    root: Path, executor: KernelExecutor, turns: int = 500, live: int = 40
) -> dict[str, float]:
    """RSS with a ``turns``-turn conversation: resumed from its session file, then ``live`` more turns.

    A live turn (prompt → agent → streamed answer → blocks) costs ~0.05-0.1 s of layout on this machine
    at the block budget, so 500 live turns do not fit in the one-minute budget of this script; the
    first ``turns - live`` turns come from the store (rendered within the block budget) and the last
    ``live`` turns run through the agent and the UI, pruning as they go. ``live_turn_ms`` is the median
    time of those live turns (prompt sent to turn ended, without waiting for a repaint per turn).
    """
    answer = "Here is an answer with `code` and a list:\n\n- one\n- two\n\n```python\nprint('x')\n```\n"
    config = _steady(root)
    store = SessionStore(config.resolved_sessions_dir(), fsync=False)
    session = store.new_session()
    for index in range(turns - live):
        session.append(
            [
                ModelRequest(parts=[UserPromptPart(f"question {index}")]),
                ModelResponse(parts=[TextPart(answer)]),
            ]
        )
    session.flush_meta()
    app = FreeactApp(config, model=_model([answer]), session_id=session.id, executor=executor)
    start_rss = _rss_mb()
    per_turn: list[float] = []
    started = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        await _until(lambda: app.agent_ready)
        screen = app.main_screen
        prompt = screen.query_one(PromptInput)
        for index in range(live):
            turn_start = time.perf_counter()
            # Through the prompt's own Submitted handler, without waiting for a full repaint per turn.
            prompt.post_message(PromptInput.Submitted(prompt, f"question {turns - live + index}"))
            await _until(lambda: screen.turn_running, step=0.0005)
            await _until(lambda: not screen.turn_running, step=0.0005)
            per_turn.append(time.perf_counter() - turn_start)
        await pilot.pause()
        blocks = len(screen.conversation.blocks)
        history = len(app.agent.history) if app.agent else 0
        rss = _rss_mb()
    return {
        "rss_mb": round(rss, 1),
        "rss_growth_mb": round(rss - start_rss, 1),
        "mounted_blocks": blocks,
        "messages": history,
        "seconds": round(time.perf_counter() - started, 1),
        "live_turn_ms": round(statistics.median(per_turn) * 1000, 1),
    }


async def main() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["FREEACT_TUI_HOME"] = str(root / "home")  # never touch the real config
        launches = [await bench_launch(root / f"launch{i}") for i in range(RUNS)]
        executor = KernelExecutor(working_dir=root, images_dir=root / "images")
        await executor.start()
        try:
            rates = [await bench_stream(root / f"stream{i}", executor) for i in range(RUNS)]
            latencies = await bench_key_latency(root / "keys", executor)
            memory = await bench_memory(root / "memory", executor)
        finally:
            await executor.stop()
    latencies.sort()
    p95 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.95))]
    return {
        "launch_to_prompt_s": round(statistics.median(launches), 3),
        "stream_chars_per_s": round(statistics.median(rates)),
        "key_latency_ms_p50": round(statistics.median(latencies), 1),
        "key_latency_ms_p95": round(p95, 1),
        "memory_after_500_turns_mb": memory["rss_mb"],
        "memory_growth_mb": memory["rss_growth_mb"],
        "mounted_blocks_after_500_turns": memory["mounted_blocks"],
        "messages_in_session": memory["messages"],
        "turns_seconds": memory["seconds"],
        "live_turns": 40,
        "live_turn_ms_median": memory["live_turn_ms"],
    }


if __name__ == "__main__":
    run_bench(__doc__.splitlines()[0], main)
