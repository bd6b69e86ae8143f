"""The class "requests of one session take effect in the order the client sent them", over generated
interleavings of prompts and settings changes (``session/set_mode``, ``session/set_config_option``).

The SDK runs each incoming request in a task of its own, in arrival order; the server must give every
per-session request its place in one queue before its first ``await``. Here the real ``FreeactAcpAgent``
(real agents and session store; the model is the fake OpenAI server) gets requests the way the SDK hands
them over: each a task, created in the order sent, none awaited before the next is sent. Each prompt
must talk to the model chosen by the last change sent before it, in the mode set last before it, and
every request must finish in the order sent (a change waits for the prompts before it; a prompt waits
for the changes before it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.acp.server import FreeactAcpAgent
from freeact_tui.agent.agent import Agent
from freeact_tui.project.config import Config, load_config
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply

pytestmark = pytest.mark.timeout(600)

MODELS = ["fake-model", "model-b", "model-c"]
MODES = ["ask", "auto", "plan"]


@dataclass(frozen=True)
class Op:
    kind: str  # "prompt", "model", "mode"
    value: str = ""


class Client:
    """The client side: it records what it is sent, and is never asked anything here."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("nothing here asks")


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    def answer(request: RecordedRequest) -> Reply:
        return Reply(f"{request.body.get('model')}: {request.last_user_text()}", delay=0.002)

    with FakeOpenAI(answer, models=MODELS) as fake:
        yield fake


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("order")
    (root / "acp.toml").write_text('subagent_pool_size = 0\ncheckpoints = false\naction_protocol = "tools"\n')
    (root / "work").mkdir()
    return root


def _agent(server: FakeOpenAI, work: Path) -> FreeactAcpAgent:
    overrides = {"base_url": server.url, "model": MODELS[0]}

    def config_for(cwd: Path) -> Config:
        return load_config(work / "acp.toml", overrides, cwd=cwd, trust_project=False)

    def agent_factory(config: Config, **kwargs: Any) -> Agent:
        return Agent.from_config(config, eager_kernel=False, **kwargs)  # no code runs here: no kernel

    return FreeactAcpAgent(config_for, agent_factory)


async def _session_modes(agent: FreeactAcpAgent, session_id: str, seen: list[tuple[str, str]]) -> None:
    """Record the mode each prompt's turn runs in (from inside the turn, as it starts)."""
    turns = agent.turns
    run_prompt = turns.run_prompt

    async def recording(session: Any, text: str, content: Any) -> Any:
        seen.append((text, session.mode))
        return await run_prompt(session, text, content)

    turns.run_prompt = recording  # type: ignore[method-assign]


async def _play(
    server: FakeOpenAI, work: Path, ops: list[Op]
) -> tuple[list[int], dict[str, str], dict[str, str]]:
    agent = _agent(server, work)
    client = Client()
    agent.on_connect(client)  # type: ignore[arg-type]
    opened = await agent.new_session(cwd=str(work / "work"), mcp_servers=[])
    sid = opened.session_id
    modes: list[tuple[str, str]] = []
    await _session_modes(agent, sid, modes)
    finished: list[int] = []
    try:
        tasks = []
        for i, op in enumerate(ops):  # as the SDK does: a task per request, in the order they came
            if op.kind == "prompt":
                call = agent.prompt([text_block(f"p{i}")], sid)
            elif op.kind == "model":
                call = agent.set_config_option(config_id="model", session_id=sid, value=op.value)
            else:
                call = agent.set_session_mode(session_id=sid, mode_id=op.value)
            task = asyncio.create_task(call)
            task.add_done_callback(lambda _, i=i: finished.append(i))
            tasks.append(task)
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert not [r for r in results if isinstance(r, BaseException)], results
    finally:
        await agent.shutdown()
    models = {}
    for request in server.requests:
        if request.method == "POST" and request.last_user_text().startswith("p"):
            models[request.last_user_text()] = request.body.get("model")
    return finished, models, dict(modes)


ops = st.lists(
    st.one_of(
        st.just(Op("prompt")),
        st.sampled_from(MODELS).map(lambda m: Op("model", m)),
        st.sampled_from(MODES).map(lambda m: Op("mode", m)),
    ),
    min_size=2,
    max_size=6,
).filter(lambda xs: any(o.kind == "prompt" for o in xs) and any(o.kind != "prompt" for o in xs))


def _expected(sequence: list[Op]) -> tuple[dict[str, str], dict[str, str]]:
    model, mode = MODELS[0], "ask"
    models, modes = {}, {}
    for i, op in enumerate(sequence):
        if op.kind == "model":
            model = op.value
        elif op.kind == "mode":
            mode = op.value
        else:
            models[f"p{i}"], modes[f"p{i}"] = model, mode
    return models, modes


@given(ops)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_prompts_and_settings_changes_take_effect_in_the_order_sent(
    server: FakeOpenAI, work: Path, sequence: list[Op]
) -> None:
    server.requests.clear()
    finished, models, modes = asyncio.run(_play(server, work, sequence))
    want_models, want_modes = _expected(sequence)
    assert models == want_models, (sequence, models)
    assert modes == want_modes, (sequence, modes)
    assert finished == list(range(len(sequence))), (sequence, finished)


def test_a_model_change_sent_after_a_prompt_waits_for_it_and_the_next_prompt_uses_it(
    server: FakeOpenAI, work: Path
) -> None:
    """The attacker's case: a prompt, then a model change, then a prompt, all sent at once."""
    sequence = [Op("prompt"), Op("model", "model-b"), Op("prompt"), Op("mode", "plan"), Op("prompt")]
    server.requests.clear()
    finished, models, modes = asyncio.run(_play(server, work, sequence))
    assert models == {"p0": "fake-model", "p2": "model-b", "p4": "model-b"}
    assert modes == {"p0": "ask", "p2": "ask", "p4": "plan"}
    assert finished == [0, 1, 2, 3, 4]
