"""``session/load`` replays a code action that made an image as ACP showed it live: the kernel's output and
the image as an image block, not the lines that name the image for the model (the SDK's own client, the
real ``freeact-tui acp`` subprocess, a real kernel, the fake OpenAI server as the model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from freeact_tui.store.event_record import IMAGE_NOTE
from tests.acp_client import RecordingClient, acp_agent, content_texts, write_config
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.helpers import fake_args

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]

CODE_TOOL = "ipybox_execute_ipython_cell"
PLOT = (
    "import matplotlib\nmatplotlib.use('module://matplotlib_inline.backend_inline')\n"
    "import matplotlib.pyplot as plt\nprint('plotted')\n"
    "plt.figure(figsize=(1, 1)); plt.plot([0, 1]); plt.show()"
)


def _result(client: RecordingClient, call_id: str) -> dict[str, Any]:
    """The last update of a call that carries its output (the end, with its status)."""
    ends = [u for u in client.call_updates(call_id) if u.get("status") in ("completed", "failed")]
    assert ends, client.call_updates(call_id)
    return ends[-1]


def _images(update: dict[str, Any]) -> list[dict[str, Any]]:
    return [c["content"] for c in update.get("content", []) if c.get("content", {}).get("type") == "image"]


async def test_a_loaded_session_shows_an_image_result_as_it_was_sent_live(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    config = write_config(tmp_path)
    fake_openai.script(
        Reply(tool_calls=[ToolCallReply(CODE_TOOL, {"code": PLOT}, call_id="call_plot")]),
        Reply("A rising line."),
    )
    live = RecordingClient(["allow_once"])
    async with acp_agent(live, *fake_args(fake_openai, config), cwd=work) as (conn, _):
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("plot a line")])
    sent = _result(live, "call_plot")
    assert sent["status"] == "completed"
    (image,) = _images(sent)
    assert image["mimeType"] == "image/png" and image["data"]
    assert "plotted" in content_texts(sent) and IMAGE_NOTE.strip() not in content_texts(sent)
    told = str(fake_openai.requests[1].messages)
    assert IMAGE_NOTE.strip() in told  # the model got the lines that name the image: they are stored

    again = RecordingClient()
    async with acp_agent(again, *fake_args(fake_openai, config), cwd=work) as (conn, _):
        await conn.load_session(cwd=str(work), session_id=sid, mcp_servers=[])
    replayed = _result(again, "call_plot")
    assert replayed["status"] == "completed"
    assert replayed["content"] == sent["content"]  # the code, the output and the image, as live
