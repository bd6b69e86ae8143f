"""#44 (third attack, F2): every session the agent makes records its folder, and ``session/list {cwd}`` never
hands a session to a folder it was not made in.

Before: a fork's meta had ``cwd: null`` (its directory existed already when its meta was first written, and the
folder was written only for a new directory), and a session without a folder was listed under ANY asked folder,
so a client loaded another folder's conversation into its own. Now the folder is written whenever the meta has
none (``Session.update_meta(home=...)``, whichever way the session was made) and a session without one is
listed nowhere."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from acp import text_block

from tests.acp_client import RecordingClient, acp_agent
from tests.fake_openai import FakeOpenAI, Reply
from tests.helpers import fake_args

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]


def meta_of(session_id: str) -> dict[str, object]:
    (path,) = Path(os.environ["FREEACT_TUI_HOME"]).rglob(f"{session_id}/meta.json")
    meta: dict[str, object] = json.loads(path.read_text())
    return meta


async def test_a_fork_records_its_folder_and_is_listed_only_there(
    fake_openai: FakeOpenAI, work: Path, tmp_path: Path, config_file: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    fake_openai.script(Reply("first answer"))
    client = RecordingClient()
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        source = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        await conn.prompt(session_id=source, prompt=[text_block("one")])
        fork = (await conn.fork_session(cwd=str(work), session_id=source, mcp_servers=[])).session_id
        here = await conn.list_sessions(cwd=str(work))
        there = await conn.list_sessions(cwd=str(elsewhere))
    assert meta_of(fork)["cwd"] == str(work)
    assert {s.session_id: s.cwd for s in here.sessions} == {source: str(work), fork: str(work)}
    assert there.sessions == []
