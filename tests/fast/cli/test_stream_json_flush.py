"""``run -o stream-json`` flushes the pieces of a stream together (a reply in 4-character deltas is one
line per delta, and a write to a pipe each cost more than the rest of the work), yet never holds a piece
back while the model is silent: every line is written, in order, and a piece is out within
``PIECE_FLUSH_S`` of its event."""

from __future__ import annotations

import asyncio
import io
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from freeact_tui.agent.agent import Agent
from freeact_tui.cli.run import PIECE_FLUSH_S, HeadlessRun
from freeact_tui.permissions.rules import PermissionRules

DELTAS = 400
PAUSE = 0.6


class CountingOut(io.StringIO):
    """Output that records, at each flush, the time and how much had been written."""

    def __init__(self) -> None:
        super().__init__()
        self.flushes: list[tuple[float, int]] = []

    def flush(self) -> None:
        self.flushes.append((time.monotonic(), len(self.getvalue())))
        super().flush()


def test_stream_pieces_are_flushed_together_and_never_held_while_the_model_is_silent(tmp_path: Path) -> None:
    paused_at: list[float] = []

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for i in range(DELTAS):
            yield f"w{i} "
        paused_at.append(time.monotonic())
        await asyncio.sleep(PAUSE)  # the model is silent: what it said so far must be out
        yield "end."

    agent = Agent(
        FunctionModel(stream_function=stream, model_name="m"),
        sessions_dir=tmp_path / "s",
        working_dir=tmp_path,
        permissions=PermissionRules(None, working_dir=tmp_path),
        eager_kernel=False,
    )
    out = CountingOut()
    code = HeadlessRun(agent, "go", "stream-json", out=out, err=io.StringIO()).run()
    assert code == 0
    written = out.getvalue()
    events = [json.loads(line) for line in written.splitlines()]
    text = "".join(e["content"] for e in events if e["type"] == "response_chunk")
    assert text == "".join(f"w{i} " for i in range(DELTAS)) + "end."  # every piece, in order
    assert len(out.flushes) < DELTAS / 4  # together, not one flush a piece
    last_before_pause = written.index(f'"w{DELTAS - 1} "')
    silent = [(t, n) for t, n in out.flushes if paused_at[0] <= t < paused_at[0] + PAUSE]
    assert silent and max(n for _, n in silent) > last_before_pause, "pieces held back while the model was silent"
    assert min(t for t, _ in silent) <= paused_at[0] + PIECE_FLUSH_S + 0.25  # out within the bound (and slack)
