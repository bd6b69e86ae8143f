"""#45 over ACP: ``session/cancel`` while the model answers a tool result, then a new prompt.

The real ``freeact-tui acp`` process on a real kernel; the model is the fake OpenAI server, so what is
checked is the request on the wire (OpenAI chat messages): the tool result is there, answered by
nothing the app made up — the app's close of the cancelled request is not an assistant message.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from freeact_tui.store.prompt_record import CANCELLED_NOTE
from tests.acp_client import RecordingClient, acp_agent
from tests.fake_openai import FakeOpenAI, Reply, Stall, ToolCallReply
from tests.helpers import fake_args

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]


def roles(messages: list[dict[str, Any]]) -> list[str]:
    return [str(m.get("role")) for m in messages]


def text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)


async def test_cancel_while_the_model_answers_a_result(
    fake_openai: FakeOpenAI, work: Path, config_file: Path
) -> None:
    call = ToolCallReply("ipybox_execute_ipython_cell", {"code": "print(6 * 7)"}, call_id="call_m")
    fake_openai.script(Reply(tool_calls=[call]), Stall(60), Reply("48"))
    client = RecordingClient(["allow_once"])
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        sid = session.session_id
        turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("6 times 7?")]))
        await client.until(lambda: len(fake_openai.requests) >= 2)  # the model answers the result: no token yet
        await conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(turn, 30)).stop_reason == "cancelled"
        again = await conn.prompt(session_id=sid, prompt=[text_block("and 6 times 8?")])
    assert again.stop_reason == "end_turn"
    sent = fake_openai.requests[2].messages
    assert roles(sent) == ["system", "user", "assistant", "tool", "user"]
    assert [text(m) for m in sent if m["role"] == "user"] == ["6 times 7?", "and 6 times 8?"]
    assert "42" in fake_openai.requests[2].tool_results()[0]
    assert not any(CANCELLED_NOTE in text(m) for m in sent)
