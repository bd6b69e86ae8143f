"""A long session opens fast: a 6,000-message (~6 MB) session shows its last turn within 1 s of resuming.

The session is synthetic but mixed as real ones are: prompts, thoughts, code actions with their outputs
(every few turns a longer one), answers in Markdown. Measured (median of ``RUNS`` runs, each in a fresh
app): seconds from the app's start to its last answer being mounted and drawn (``last_turn_s``; the
app's own launch and kernel start included), from its opening the session to then
(``resume_to_last_turn_s``: reading the file, the replay, the first mount; and the CPU seconds this
process spent meanwhile, ``resume_to_last_turn_cpu_s``, which a loaded machine changes less), the
blocks mounted then, and the process's peak RSS. Run: ``python bench/long_session.py [--json]``.
"""

from __future__ import annotations

import asyncio
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _report import run_bench  # noqa: E402  (bench/ is on the path when a script runs)
from sessions import step_messages  # noqa: E402

from freeact_tui.project.config import Config  # noqa: E402
from freeact_tui.store.sessions import SessionStore  # noqa: E402
from freeact_tui.store.step_record import StepRecord  # noqa: E402
from freeact_tui.tui.app import FreeactApp  # noqa: E402
from freeact_tui.tui.widgets.blocks import Block, ResponseBlock  # noqa: E402

MESSAGES = 6_000
RUNS = int(__import__("os").environ.get("RUNS", "3"))
SIZE = (120, 40)
LAST_ANSWER = "That was the last step: the series converges, as the table above shows."


def turn(i: int) -> list[ModelMessage]:
    """Four messages of a turn (prompt, thinking + code action, its output, a Markdown answer), ~4 KB."""
    code = f"import math\nvalues = [math.sin(x / 10) for x in range({i % 97})]\nprint(sum(values))\n" * 4
    lines = 60 if i % 5 == 0 else 12
    output = "".join(f"{i}.{n}: {n * 0.125:.6f} {'#' * (n % 40)}\n" for n in range(lines))
    answer = (
        f"## Step {i}\n\nThe sum is shown above; it **oscillates** because `sin` does.\n\n"
        "- the terms alternate in sign\n- the partial sums stay bounded\n\n"
        "```python\nprint(sum(math.sin(x / 10) for x in range(10)))\n```\n\n"
    ) * 3
    thinking = "The user wants a numeric result; run it in the kernel first. " * 6
    return step_messages(i, code, thinking, output, answer, model_name="bench", metadata=StepRecord(outcome="ok").to_meta())


def write_session(root: Path) -> tuple[Config, str, int]:
    """A session of ``MESSAGES`` messages; the last answer is ``LAST_ANSWER``. Returns its size in bytes."""
    config = Config(sessions_dir=root / "sessions", working_dir=root, subagent_pool_size=0)
    session = SessionStore(config.resolved_sessions_dir(), fsync=False).new_session()
    batch: list[ModelMessage] = [ModelRequest(parts=[SystemPromptPart("You are a code-action agent. " * 40)])]
    for i in range((MESSAGES - 1) // 4):
        batch += turn(i)
    batch.append(ModelRequest(parts=[UserPromptPart("And the last step?")]))
    batch += [ModelResponse(parts=[TextPart(LAST_ANSWER)], model_name="bench")] * (MESSAGES - len(batch))
    session.append(batch)
    session.flush_meta()
    return config, session.id, session.history_path().stat().st_size


def _model() -> FunctionModel:
    async def answer(messages: list[ModelMessage], info: AgentInfo) -> Any:
        yield "ok"

    return FunctionModel(stream_function=answer, model_name="bench")


def _last_drawn(app: FreeactApp) -> bool:
    try:
        log = app.main_screen.conversation
    except Exception:  # the main screen is not up yet
        return False
    blocks = log.query(ResponseBlock)
    return bool(blocks) and blocks.last().text == LAST_ANSWER and blocks.last().region.height > 0


async def _until(condition: Callable[[], bool], limit: float = 50.0) -> None:
    deadline = time.perf_counter() + limit
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("benchmark condition not reached")
        await asyncio.sleep(0.005)


async def resume_once(config: Config, session_id: str) -> dict[str, float]:
    """Seconds from the app's start, and from its opening the session (reading the file included), to
    its last answer drawn on the screen; the blocks mounted then."""
    app = FreeactApp(config, model=_model(), session_id=session_id)
    opened = app._open_agent
    resume_at = [0.0, 0.0]

    async def timed(*, session_id: str | None, model: Any) -> Any:  # opening the session starts resuming
        resume_at[:] = [time.perf_counter(), time.process_time()]
        return await opened(session_id=session_id, model=model)

    app._open_agent = timed  # type: ignore[method-assign]
    start = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        await _until(lambda: _last_drawn(app))
        drawn = asyncio.Event()
        app.call_after_refresh(drawn.set)
        await drawn.wait()
        drawn_at, drawn_cpu = time.perf_counter(), time.process_time()
        blocks = len(app.main_screen.conversation.query(Block))
        await _until(lambda: app.agent_ready)  # leave with the boot finished (its kernel is stopped on exit)
        await pilot.pause()
    return {
        "seconds": drawn_at - start,
        "resume": drawn_at - resume_at[0],
        "resume_cpu": drawn_cpu - resume_at[1],
        "blocks": blocks,
    }


async def main() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        config, session_id, size = write_session(Path(tmp))
        runs = [await resume_once(config, session_id) for _ in range(RUNS)]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "messages": MESSAGES,
        "file_mb": round(size / 1048576, 1),
        "last_turn_s": round(statistics.median(r["seconds"] for r in runs), 2),
        "last_turn_s_runs": [round(r["seconds"], 2) for r in runs],
        "resume_to_last_turn_s": round(statistics.median(r["resume"] for r in runs), 2),
        "resume_to_last_turn_cpu_s": round(statistics.median(r["resume_cpu"] for r in runs), 2),
        "mounted_blocks": int(statistics.median(r["blocks"] for r in runs)),
        "peak_rss_mb": round(peak, 1),
        "target_s": 1.0,
    }


if __name__ == "__main__":
    run_bench(__doc__.splitlines()[0], main)
