"""Usage counts what was sent to the provider, never what the history kept (``usage.SentRequests``).

The class: a request whose reply was retried, cut, failed, cancelled or rolled back cost the provider a
request all the same; counting requests from the kept replies left those out. Generated sequences of
server faults are played by the fake OpenAI server through the real client stack, turn after turn: the
requests the agent counts are the requests the server received, whatever became of each reply.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.agent import model_call
from freeact_tui.agent.models import resolve_model
from freeact_tui.events import UsageUpdate
from tests.fake_openai import (
    Cut,
    FakeOpenAI,
    HttpError,
    Malformed,
    Raw,
    RecordedRequest,
    Reply,
    ReplySpec,
    Stall,
)
from tests.helpers import make_agent, of, turn

FAULTS: list[ReplySpec] = [
    HttpError(500),  # retried
    HttpError(400, "bad request (fake)"),  # not retried: rolled back
    Malformed(),
    Malformed(text_before="Some te"),  # shown, then broken: cut
    Cut("Partial answ"),
    Cut("Partial answ", clean=True),
    Raw("<html>not the API</html>", "text/html"),
    Reply("A whole answer.", usage=(11, 3)),
    Reply("An answer with no usage reported.", usage=None),
]


@pytest.fixture(autouse=True)
def no_retry_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_call, "RETRY_DELAYS", (0.0, 0.0))


def server_model(server: FakeOpenAI) -> object:
    return resolve_model("fake-model", base_url=server.url)


async def play(
    server: FakeOpenAI, tmp_path: Path, replies: list[ReplySpec]
) -> tuple[int, list[UsageUpdate], UsageUpdate]:
    """Every scripted reply taken, turn after turn; the agent's request count, its usage events, and the
    usage the session shows when resumed."""
    server.reset()
    server.script(*replies)
    agent = make_agent(server_model(server), None, tmp_path, eager_kernel=False)  # type: ignore[arg-type]
    events = []
    try:
        for _ in range(len(replies) + 1):
            if not server.pending:
                break
            events += await turn(agent, "go")
    finally:
        await agent.stop()
    resumed = make_agent(server_model(server), None, tmp_path, eager_kernel=False, session_id=agent.session_id)  # type: ignore[arg-type]
    async with resumed:
        restored = resumed.usage
    return agent.usage.requests, of(events, UsageUpdate), restored


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(replies=st.lists(st.sampled_from(FAULTS), min_size=1, max_size=6))
def test_requests_counted_are_the_requests_the_server_received(
    fake_openai: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory, replies: list[ReplySpec]
) -> None:
    tmp_path = tmp_path_factory.mktemp("usage")
    requests, usage, restored = asyncio.run(play(fake_openai, tmp_path, replies))
    assert requests == fake_openai.count >= len(replies)  # a retry past the script is answered HTTP 400
    assert usage[-1].requests == requests  # the event every front end shows (/cost, ACP usage_update)
    assert restored.requests == requests  # and the session resumed: counted from what was sent, not kept
    assert (restored.input_tokens, restored.output_tokens) == (usage[-1].input_tokens, usage[-1].output_tokens)
    answered = [r for r in replies if isinstance(r, Reply) and r.usage is not None]
    assert usage[-1].input_tokens >= sum(r.usage[0] for r in answered if r.usage)  # reported tokens counted


def test_a_request_cancelled_before_its_reply_is_counted(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    async def main() -> int:
        at_server = threading.Event()

        def stall(_: RecordedRequest) -> ReplySpec:
            at_server.set()
            return Stall(30)

        fake_openai.script(stall, Reply("after the cancel"))
        agent = make_agent(server_model(fake_openai), None, tmp_path, eager_kernel=False)  # type: ignore[arg-type]
        try:
            slow = asyncio.create_task(turn(agent, "slow"))
            await asyncio.to_thread(at_server.wait, 10)  # the request is at the server, which sends nothing
            agent.cancel()
            await slow
            await turn(agent, "next")
            return agent.usage.requests
        finally:
            await agent.stop()

    assert asyncio.run(main()) == fake_openai.count == 2
