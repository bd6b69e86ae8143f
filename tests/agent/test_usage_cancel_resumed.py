"""#45 leftover (model9): usage counted live is the usage a resume counts, cancels after failed tries too.

A request retried after failed tries and cancelled before any reply was counted live (its tries, each
sent) and lost on resume: the cancel's close carried no usage record. Class: a request whose usage is
counted live but stored with nothing. Mechanism: what an unanswered request cost (``TurnState.unanswered``)
is stored with what the turn leaves — the kept part, the error record, and now the cancel's close
(``turn/loop.py``) — and a failed request's input is estimated from what was sent
(``usage.SentRequests.unanswered``). Property over generated turns (answers, faults, cancels after
0-2 failed tries) through the fake OpenAI server and the real client stack: live == resumed.
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
from tests.fake_openai import FakeOpenAI, HttpError, RecordedRequest, Reply, ReplySpec, Stall
from tests.helpers import make_agent, turn

Turn = tuple[str, int]  # ("answer" | "fail" | "cancel", failed tries before it)
TURNS = st.tuples(st.sampled_from(["answer", "fail", "cancel"]), st.integers(0, 2))


@pytest.fixture(autouse=True)
def no_retry_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_call, "RETRY_DELAYS", (0.0, 0.0))


async def play(server: FakeOpenAI, tmp_path: Path, turns: list[Turn]) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """The turns played (a cancel while the server stalls); the usage live and the usage resumed."""
    server.reset()
    model = resolve_model("fake-model", base_url=server.url)
    agent = make_agent(model, None, tmp_path, eager_kernel=False)
    try:
        for kind, tries in turns:
            at_server = threading.Event()

            def stall(_: RecordedRequest, at_server: threading.Event = at_server) -> ReplySpec:
                at_server.set()
                return Stall(30)

            last: dict[str, object] = {
                "answer": Reply("An answer.", usage=None),
                "fail": HttpError(400, "bad request (fake)"),
                "cancel": stall,
            }
            server.script(*[HttpError(500)] * tries, last[kind])  # type: ignore[arg-type]
            if kind == "cancel":
                task = asyncio.create_task(turn(agent, "slow"))
                await asyncio.to_thread(at_server.wait, 10)
                agent.cancel()
                await task
            else:
                await turn(agent, "go")
        u = agent.usage
        live = (u.requests, u.input_tokens, u.output_tokens)
    finally:
        await agent.stop()
    resumed = make_agent(model, None, tmp_path, eager_kernel=False, session_id=agent.session_id)
    async with resumed:
        r = resumed.usage
    return live, (r.requests, r.input_tokens, r.output_tokens)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(turns=st.lists(TURNS, min_size=1, max_size=3))
def test_usage_counted_live_is_the_usage_resumed(
    fake_openai: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory, turns: list[Turn]
) -> None:
    live, resumed = asyncio.run(play(fake_openai, tmp_path_factory.mktemp("usage"), turns))
    assert live[0] == fake_openai.count  # every request sent counted
    assert resumed == live, turns


def test_a_cancel_after_failed_tries_is_counted_on_resume(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    """The reported case: two failed tries, the third cancelled before any reply."""
    live, resumed = asyncio.run(play(fake_openai, tmp_path, [("cancel", 2)]))
    assert live[0] == 3 and live[1] > 0  # the tries' input, estimated: the server reported none
    assert resumed == live
