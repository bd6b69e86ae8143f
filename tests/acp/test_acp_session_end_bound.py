"""#44 leftover, the class "a wait on a session's work with no bound", over generated cases, in process.

Before: ``session/close`` waited for the running prompt without a bound (``session.queue.turn()``), and the
server's end waited for every agent's ``stop``, which waited for its turn: a turn that ignores its cancel
held them forever. Here the model is the stand-in: a stream that swallows every cancel (a model request
that never returns and ignores the cancel), stuck before any token, mid-text or mid-thinking, with prompts
queued behind it or not, ended by ``session/close`` or by the server's end (stdin's end, a signal). Each
end must come within its bound, answer every prompt (``cancelled``), send nothing for the session after
the running prompt's answer, and stop the agent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, FunctionModel

from freeact_tui.acp import session_end
from freeact_tui.acp.server import FreeactAcpAgent
from freeact_tui.agent import agent as agent_module
from freeact_tui.agent.agent import Agent
from freeact_tui.project.config import Config, load_config

pytestmark = pytest.mark.timeout(300)

BOUND = 0.3
"""``CANCEL_BOUND`` here (the real one is seconds: the cases would take minutes)."""


class Client:
    """Records every update with the time it came, and every answer of a prompt."""

    def __init__(self) -> None:
        self.updates: list[tuple[float, str, Any]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((time.monotonic(), session_id, update))

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("nothing here asks")


class DeafModel:
    """A model whose request streams ``before`` and then never returns: ``deaf`` swallows every cancel (until
    ``release``, the test's own end), else a cancel ends it."""

    def __init__(self, before: str, deaf: bool) -> None:
        self.before = before
        self.deaf = deaf
        self.release = asyncio.Event()
        self.started = asyncio.Event()

    def model(self) -> FunctionModel:
        return FunctionModel(stream_function=self._stream, model_name="deaf")

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        if self.before == "text":
            yield "half an answer"
        elif self.before == "thinking":
            yield {0: DeltaThinkingPart(content="hmm")}
        self.started.set()
        while not self.release.is_set():
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                if not self.deaf:
                    raise
        yield "released"


def _server(tmp: Path, model: DeafModel) -> FreeactAcpAgent:
    config_file = tmp / "acp.toml"
    config_file.write_text('subagent_pool_size = 0\ncheckpoints = false\naction_protocol = "tools"\n')

    def config_for(cwd: Path) -> Config:
        return load_config(config_file, {"model": "test"}, cwd=cwd, trust_project=False)

    def agent_factory(config: Config, **kwargs: Any) -> Agent:
        kwargs.pop("model", None)
        return Agent.from_config(config, eager_kernel=False, model=model.model(), **kwargs)

    return FreeactAcpAgent(config_for, agent_factory)


async def _case(tmp: Path, before: str, deaf: bool, queued: int, by_close: bool) -> None:
    model = DeafModel(before, deaf)
    server = _server(tmp, model)
    client = Client()
    server.on_connect(client)  # type: ignore[arg-type]
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    session = await server.new_session(cwd=str(work), mcp_servers=[])
    sid = session.session_id
    agent = server.sessions[sid].agent
    prompts = [
        asyncio.create_task(server.prompt([text_block(f"p{i}")], sid)) for i in range(1 + queued)
    ]
    await asyncio.wait_for(model.started.wait(), 30)
    started = time.monotonic()
    try:
        if by_close:
            await asyncio.wait_for(server.close_session(sid), BOUND + 20)
        else:
            await asyncio.wait_for(server.shutdown(), BOUND + 20)
        ended = time.monotonic() - started
        answers = await asyncio.wait_for(asyncio.gather(*prompts), 5)  # answered by then, all of them
    finally:
        model.release.set()
    assert [a.stop_reason for a in answers] == ["cancelled"] * len(prompts), answers
    # a deaf turn is abandoned after the bound, and the stop of its agent waits for it a bound only
    assert ended < 3 * BOUND + 5, ended
    assert sid not in server.sessions and not agent._started  # noqa: SLF001 - stopped: its kernel, its file
    answered = time.monotonic()
    await asyncio.sleep(0.2)  # an abandoned turn released now sends nothing more
    assert not [u for t, s, u in client.updates if s == sid and t > answered], client.updates[-3:]


def _bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_end, "CANCEL_BOUND", BOUND)
    monkeypatch.setattr(agent_module, "TURN_END_GRACE", BOUND)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    before=st.sampled_from(["nothing", "text", "thinking"]),
    deaf=st.booleans(),
    queued=st.integers(0, 2),
    by_close=st.booleans(),
)
def test_a_session_ends_within_its_bound_whatever_its_turn_does(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    before: str,
    deaf: bool,
    queued: int,
    by_close: bool,
) -> None:
    _bounds(monkeypatch)
    asyncio.run(_case(tmp_path_factory.mktemp("end"), before, deaf, queued, by_close))


def test_the_reported_case_a_close_of_a_deaf_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _bounds(monkeypatch)
    asyncio.run(_case(tmp_path, "text", deaf=True, queued=1, by_close=True))
