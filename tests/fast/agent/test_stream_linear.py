"""A long reply streamed in small pieces costs work in proportion to its length, not its square.

Building the response so far (pydantic-ai's ``StreamedResponse.get()``) walks the whole reply (for open
models it also restores every special token in it); doing it per delta made a 360 KB reply in 20-char
deltas take minutes (``bench/stream_reply.py``). It is counted here: the number of builds per request
does not grow with the number of deltas, and the response so far is still there when a turn is
cancelled mid-stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import StreamedResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from freeact_tui.agent.agent import Agent
from freeact_tui.events import Cancelled, Response, ResponseChunk
from freeact_tui.permissions.rules import PermissionRules


def agent_on(model: FunctionModel, tmp_path: Path) -> Agent:
    return Agent(
        model,
        sessions_dir=tmp_path / "sessions",
        working_dir=tmp_path,
        permissions=PermissionRules(None, defaults=False),
        enable_subagents=False,
        eager_kernel=False,
    )


def pieces_model(pieces: list[str], hold: asyncio.Event | None = None) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for i, piece in enumerate(pieces):
            if hold is not None and i == len(pieces) // 2:
                await hold.wait()
            yield piece

    return FunctionModel(stream_function=stream, model_name="pieces")


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times a response so far is built (``StreamedResponse.get``)."""
    counted: list[int] = []
    original = StreamedResponse.get

    def get(self: StreamedResponse) -> ModelResponse:
        counted.append(1)
        return original(self)

    monkeypatch.setattr(StreamedResponse, "get", get)
    return counted


@pytest.mark.parametrize("deltas", [10, 1000])
async def test_the_response_so_far_is_built_a_fixed_number_of_times_per_request(
    deltas: int, tmp_path: Path, builds: list[int]
) -> None:
    text = "".join(f"word{i} " for i in range(deltas))
    pieces = [f"word{i} " for i in range(deltas)]
    async with agent_on(pieces_model(pieces), tmp_path) as agent:
        events = [e async for e in agent.stream("write")]
    assert "".join(e.content for e in events if isinstance(e, ResponseChunk)) == text
    assert [e.content for e in events if isinstance(e, Response)] == [text]
    assert len(builds) <= 2, f"{len(builds)} builds for {deltas} deltas"  # not one per delta


async def test_a_turn_cancelled_mid_stream_keeps_what_was_streamed(tmp_path: Path) -> None:
    hold = asyncio.Event()
    pieces = [f"part{i} " for i in range(20)]
    async with agent_on(pieces_model(pieces, hold), tmp_path) as agent:
        events = []
        async for event in agent.stream("write"):
            events.append(event)
            if isinstance(event, ResponseChunk) and event.content == pieces[9]:
                agent.cancel()
        hold.set()
        assert any(isinstance(e, Cancelled) for e in events)
        kept = agent.history[-1]
        assert isinstance(kept, ModelResponse)
        assert "".join(pieces[:10]) in (kept.text or "")


async def test_acp_keeps_a_bounded_tail_of_streamed_output_and_shows_the_same() -> None:
    """ACP re-sends a running call's output with each chunk (its tail, ``OUTPUT_LIMIT``): what it keeps
    per call is that tail, not the whole output, and every update shows what the whole would."""
    from acp.schema import ToolCallProgress

    from freeact_tui.acp.toolcall_view import OUTPUT_LIMIT, output_content
    from freeact_tui.acp.turn_updates import TurnUpdates
    from freeact_tui.events import ApprovalRequest, CodeExecutionOutputChunk, Decision
    from freeact_tui.toolcalls import CodeAction

    turn = TurnUpdates(Path("/work"))
    request = ApprovalRequest(CodeAction("print(1)"), corr_id="c1")
    request.resolve(Decision(True, by_rule=True))
    turn.see(request)
    whole = ""
    chunk = "line of output ✓ " * 300 + "\n"
    for _ in range(3 * OUTPUT_LIMIT // len(chunk)):
        whole += chunk
        (update,) = turn.see(CodeExecutionOutputChunk(chunk, corr_id="c1"))
        assert isinstance(update, ToolCallProgress) and update.content is not None
        assert update.content[-1] == output_content(whole)[-1]
    assert max(len(call.output) for call in turn.calls.values()) <= OUTPUT_LIMIT + 1
