"""A session's stored approval mode is never looser than the user's own when it is opened again over ACP
(``store.restored.restored_mode``): ``session/load``, ``session/resume`` and ``session/fork`` of a session
whose meta says "auto" open in "ask"; a stricter stored mode ("plan") still comes back."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.acp_client import RecordingClient, acp_agent
from tests.fake_openai import FakeOpenAI
from tests.helpers import fake_args

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]


@pytest.mark.parametrize(("chosen", "reopened"), [("auto", "ask"), ("in-folder", "ask"), ("plan", "plan")])
async def test_a_stored_mode_opens_no_looser_than_the_users_own(
    chosen: str, reopened: str, fake_openai: FakeOpenAI, work: Path, config_file: Path  # noqa: F811
) -> None:
    async with acp_agent(RecordingClient(), *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        await conn.set_session_mode(session_id=sid, mode_id=chosen)
    async with acp_agent(RecordingClient(), *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        loaded = await conn.load_session(cwd=str(work), session_id=sid, mcp_servers=[])
        resumed = await conn.resume_session(cwd=str(work), session_id=sid, mcp_servers=[])
        forked = await conn.fork_session(cwd=str(work), session_id=sid, mcp_servers=[])
    for answer in (loaded, resumed, forked):
        assert answer.modes is not None and answer.modes.current_mode_id == reopened
