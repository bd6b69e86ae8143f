"""#42 leftover 2 over ACP: the permission request says what the code does in the dialog's words, names that
a writer may land on grouped by suffix (``effects.listing``), and its options name the rule in words.

Before: ACP's ``session/request_permission`` carried the code and the options only; the effect line the app's
dialog and the headless refusal show was not there at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import text_block

from tests.acp_client import RecordingClient, acp_agent, content_texts
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.helpers import fake_args

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]

SAVEFIG = "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.savefig('fig')"


async def test_the_permission_request_says_what_the_code_writes(
    fake_openai: FakeOpenAI, work: Path, config_file: Path
) -> None:
    fake_openai.script(
        Reply(tool_calls=[ToolCallReply("ipybox_execute_ipython_cell", {"code": SAVEFIG}, call_id="call_1")]),
        Reply("not saved"),
    )
    client = RecordingClient(["reject_once"])
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        result = await conn.prompt(session_id=session.session_id, prompt=[text_block("plot it")])
        assert result.stop_reason == "end_turn"
    ((tool_call, options),) = client.asked
    texts = content_texts(tool_call.model_dump(mode="json", by_alias=True, exclude_none=True))
    assert "It writes inside this folder: fig, fig.{avif,eps,gif,jpeg,… 12 more}" in texts
    assert "more" not in texts.replace("… 12 more", "")  # no "and 13 more"
    assert any(o.name == "Always allow code that only reads and writes inside this folder" for o in options)
    assert not (work / "fig.png").exists()
