"""How a turn ends over ACP: ``refusal`` and ``max_tokens`` (a reply cut short: ``agent/reply_stops.py``),
``max_turn_requests`` (and only for the request budget), and ``session/close`` ending a running turn
and its kernel with the store left loadable.

The SDK's own client side drives the real ``freeact-tui acp`` process; the model is the fake OpenAI
server (its finish reason scripted), the kernel and the store are real.
"""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import psutil
import pytest
from acp import RequestError, text_block

from tests.acp_client import RecordingClient, acp_agent, content_texts, write_config
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, ToolCallReply
from tests.helpers import fake_args

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]


def args(server: FakeOpenAI, tmp_path: Path, *extra: str, shapes: int | None = None) -> list[str]:
    config = write_config(tmp_path)
    if shapes is not None:
        config.write_text(config.read_text() + f"max_steps_of_one_shape = {shapes}\n")
    return [*fake_args(server, config), *extra]


def code_call(code: str, call_id: str) -> Reply:
    return Reply(tool_calls=[ToolCallReply("ipybox_execute_ipython_cell", {"code": code}, call_id=call_id)])


@pytest.mark.parametrize(
    ("cut", "stop"),
    [
        (Reply("I can't help with that.", finish_reason="content_filter"), "refusal"),
        (Reply("The answer is", finish_reason="length"), "max_tokens"),
    ],
    ids=["a filtered reply is a refusal", "a reply at the token limit is max_tokens"],
)
async def test_a_reply_cut_short_ends_its_turn_by_why_and_the_next_turn_is_not(
    fake_openai: FakeOpenAI, work: Path, tmp_path: Path, cut: Reply, stop: str
) -> None:
    fake_openai.script(cut, Reply("42."))
    client = RecordingClient()
    async with acp_agent(client, *args(fake_openai, tmp_path), cwd=work) as (conn, _):
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        first = await conn.prompt(session_id=session.session_id, prompt=[text_block("what is it?")])
        answered = await conn.prompt(session_id=session.session_id, prompt=[text_block("go on")])
    assert first.stop_reason == stop
    assert answered.stop_reason == "end_turn"
    assert client.text() == f"{cut.text}42."


async def test_the_request_budget_and_the_progress_bound_are_max_turn_requests(
    fake_openai: FakeOpenAI, work: Path, tmp_path: Path
) -> None:
    # The same failing action again and again: the progress bound ends the turn long before the budget.
    fake_openai.default = lambda request: code_call("1/0", f"call_{request.index}")
    client = RecordingClient()
    launch = args(fake_openai, tmp_path, "--skip-permissions", shapes=1000)
    async with acp_agent(client, *launch, cwd=work) as (conn, _):
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        sid = session.session_id
        guarded = await conn.prompt(session_id=sid, prompt=[text_block("divide")])
        assert "made no progress" in client.text()
        stalled_requests = fake_openai.count
        # Then a model that never stops acting, each step new (it prints a word it never printed: the same
        # code with another number, and the same output but for a number, is the same step, #40): the
        # per-turn budget (100 requests) ends the turn.
        before = fake_openai.count

        def act(request: RecordedRequest) -> Reply:
            word = "".join(chr(ord("a") + int(d)) for d in str(request.index))
            return code_call(f"print('{word}')", f"call_{request.index}")

        fake_openai.default = act
        budget = await conn.prompt(session_id=sid, prompt=[text_block("count forever")])
    # (a config that lets one shape count as progress more often than the budget allows, so that the budget
    # and not ``max_steps_of_one_shape`` is what ends the second turn)
    assert guarded.stop_reason == "max_turn_requests" and stalled_requests <= 5
    assert budget.stop_reason == "max_turn_requests"
    assert fake_openai.count - before == 100
    assert "Stopped after 100 model requests" in client.text()


def _pid(client: RecordingClient, call_id: str) -> int | None:
    for update in client.call_updates(call_id):
        found = re.search(r"kernel pid (\d+)", content_texts(update))
        if found:
            return int(found.group(1))
    return None


def _ended(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _wait_ended(pid: int, timeout: float) -> bool:
    try:
        psutil.Process(pid).wait(timeout)  # not our child: psutil polls
    except psutil.NoSuchProcess:
        return True
    except psutil.TimeoutExpired:
        return _ended(pid)  # a zombie not reaped yet has ended too
    return True


async def test_close_ends_the_running_turn_and_its_kernel_and_the_session_loads_again(
    fake_openai: FakeOpenAI, work: Path, tmp_path: Path
) -> None:
    code = "import os, time\nprint('kernel pid', os.getpid(), flush=True)\ntime.sleep(60)"
    fake_openai.script(code_call(code, "call_s"), Reply("after close"))
    client = RecordingClient()
    async with acp_agent(client, *args(fake_openai, tmp_path, "--skip-permissions"), cwd=work) as (conn, _):
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        sid = session.session_id
        turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("sleep")]))
        await client.until(lambda: _pid(client, "call_s") is not None)
        pid = _pid(client, "call_s")
        assert pid is not None and not _ended(pid)
        started = time.perf_counter()
        await asyncio.wait_for(conn.close_session(session_id=sid), 30)
        result = await asyncio.wait_for(turn, 10)
        closed_in = time.perf_counter() - started
        with pytest.raises(RequestError) as refused:  # closed: no longer open in this process
            await conn.prompt(session_id=sid, prompt=[text_block("hello?")])
        kernel_ended = await asyncio.to_thread(_wait_ended, pid, 10)
        # The store is consistent and unlocked: the session loads again and goes on.
        client.updates.clear()
        await conn.load_session(cwd=str(work), session_id=sid, mcp_servers=[])
        replayed = list(client.updates)
        again = await conn.prompt(session_id=sid, prompt=[text_block("still there?")])
    assert result.stop_reason == "cancelled" and closed_in < 15, closed_in
    assert refused.value.code == -32602
    assert kernel_ended
    assert [u["sessionUpdate"] for u in replayed][:2] == ["user_message_chunk", "tool_call"]
    assert any(u.get("toolCallId") == "call_s" and u.get("status") == "failed" for u in replayed)
    assert again.stop_reason == "end_turn" and client.text().endswith("after close")
    # The model is told what the cell printed before it was interrupted, then that it was.
    assert [r.lower() for r in fake_openai.requests[-1].tool_results()] == [
        f"kernel pid {pid}\ninterrupted by user."
    ]


async def test_close_is_advertised_and_an_unknown_session_is_refused(
    fake_openai: FakeOpenAI, work: Path, tmp_path: Path
) -> None:
    client = RecordingClient()
    async with acp_agent(client, *args(fake_openai, tmp_path), cwd=work) as (conn, _):
        info = await conn.initialize(protocol_version=1)
        with pytest.raises(RequestError) as refused:
            await conn.close_session(session_id="4f9c2b8e-0000-4000-8000-000000000000")
    capabilities = info.agent_capabilities
    assert capabilities is not None and capabilities.session_capabilities is not None
    assert capabilities.session_capabilities.close is not None
    assert refused.value.code == -32602
