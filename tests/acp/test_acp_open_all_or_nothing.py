"""#44 (atk9a F2b): an open that failed after it began left the session open (its agent running, its writer
lock held: a second load was refused, a prompt ran), and a turn whose stream raised was left unclosed (the
next prompt was refused "a turn is already running").

The class: work that fails half-way leaves what it began. Mechanism: an open (load, resume, fork) is all or
nothing (``FreeactAcpAgent._all_or_nothing``): any failure once it began closes what it opened, releases
the lock and answers with the one refusal of an open; a turn's stream is closed however the turn ends.

The real ``FreeactAcpAgent`` with real agents and store (the model is the fake OpenAI server); the fault
comes from the client's side: a client whose handling of one kind of update fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from freeact_tui.acp.errors import INVALID_PARAMS, SESSION_UNUSABLE
from freeact_tui.acp.server import FreeactAcpAgent
from freeact_tui.agent.agent import Agent
from freeact_tui.project.config import Config, load_config
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply

pytestmark = pytest.mark.timeout(300)


class Client:
    """Records updates; handling an update of kind ``fail_on`` fails (as a broken editor extension would)."""

    def __init__(self) -> None:
        self.fail_on: str | None = None
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if update.session_update == self.fail_on:
            raise RuntimeError(f"the client broke on {self.fail_on}")
        self.updates.append(update)

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("nothing here asks")


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def _agent(server: FakeOpenAI, tmp_path: Path) -> FreeactAcpAgent:
    config = tmp_path / "acp.toml"
    config.write_text('subagent_pool_size = 0\ncheckpoints = false\naction_protocol = "tools"\n')
    overrides = {"base_url": server.url, "model": "fake-model", "skip_permissions": True}

    def config_for(cwd: Path) -> Config:
        return load_config(config, overrides, cwd=cwd, trust_project=False)

    def agent_factory(config: Config, **kwargs: Any) -> Agent:
        return Agent.from_config(config, eager_kernel=False, **kwargs)

    return FreeactAcpAgent(config_for, agent_factory)


async def test_a_load_that_fails_half_way_leaves_nothing_open_and_the_next_load_works(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    server.script(Reply("hello"), Reply("after the failed load"))
    client = Client()
    agent = _agent(server, tmp_path)
    agent.on_connect(client)  # type: ignore[arg-type]
    try:
        sid = (await agent.new_session(cwd=str(work), mcp_servers=[])).session_id
        await agent.prompt([text_block("hi")], sid)
        await agent.close_session(sid)
        client.fail_on = "user_message_chunk"  # the replay breaks after the session was opened
        with pytest.raises(RequestError) as refused:
            await agent.load_session(cwd=str(work), session_id=sid, mcp_servers=[])
        assert refused.value.code == SESSION_UNUSABLE
        assert "the client broke" in str(refused.value)
        assert sid not in agent.sessions  # not open here
        with pytest.raises(RequestError) as unknown:
            await agent.prompt([text_block("is it open?")], sid)
        assert unknown.value.code == INVALID_PARAMS
        client.fail_on = None
        await agent.load_session(cwd=str(work), session_id=sid, mcp_servers=[])  # its lock was released
        answer = await agent.prompt([text_block("and now?")], sid)
        assert answer.stop_reason == "end_turn"
    finally:
        await agent.shutdown()


async def test_a_turn_whose_updates_fail_is_closed_and_the_next_prompt_runs(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    write = ToolCallReply("filesystem_write_text_file", {"path": "x.txt", "content": "x"}, call_id="w1")
    server.script(Reply(tool_calls=[write]), Reply("written"), Reply("the next one"))
    client = Client()
    agent = _agent(server, tmp_path)
    agent.on_connect(client)  # type: ignore[arg-type]
    try:
        sid = (await agent.new_session(cwd=str(work), mcp_servers=[])).session_id
        client.fail_on = "tool_call"
        with pytest.raises(RuntimeError):
            await agent.prompt([text_block("write it")], sid)
        client.fail_on = None
        answer = await agent.prompt([text_block("next")], sid)  # never "a turn is already running"
        assert answer.stop_reason == "end_turn"
    finally:
        await agent.shutdown()
