"""``session/load`` replays whole sessions (written over ACP, by ``run``, by freeact), and a session
started over ACP resumes in the app (the real app under ``run_test``, a real kernel)."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from acp import text_block

from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.project import paths, trust
from freeact_tui.project.config import Config
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.widgets.blocks import ExecutionOutputBlock, ResponseBlock, UserMessageBlock
from tests.acp_client import RecordingClient, acp_agent, agent_env, content_texts
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.helpers import CLI, fake_args

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]

CODE_TOOL = "ipybox_execute_ipython_cell"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "freeact_sessions"


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "acp.toml"
    path.write_text("subagent_pool_size = 0\ncheckpoints = false\n")
    return path


async def test_acp_session_replays_over_acp_continues_and_resumes_in_the_app(
    fake_openai: FakeOpenAI, tmp_path: Path, config_file: Path, executor: KernelExecutor
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    fake_openai.script(
        Reply(tool_calls=[ToolCallReply(CODE_TOOL, {"code": "print(6 * 7)"}, call_id="call_1")]),
        Reply("It is 42."),
        Reply("Still 42."),
    )
    first = RecordingClient(["allow_once"])
    async with acp_agent(first, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("compute 6*7")])

    # A new process loads it: the whole conversation comes back as updates before the response.
    again = RecordingClient()
    async with acp_agent(again, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        loaded = await conn.load_session(cwd=str(work), session_id=sid, mcp_servers=[])
        replayed = list(again.updates)
        result = await conn.prompt(session_id=sid, prompt=[text_block("and now?")])
    assert loaded is not None and loaded.modes is not None
    kinds = [u["sessionUpdate"] for u in replayed]
    assert kinds == ["user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]
    assert replayed[0]["content"]["text"] == "compute 6*7"
    assert (replayed[1]["toolCallId"], replayed[1]["kind"]) == ("call_1", "execute")
    assert "print(6 * 7)" in content_texts(replayed[1])
    assert replayed[2]["status"] == "completed" and "42" in content_texts(replayed[2])
    assert replayed[3]["content"]["text"] == "It is 42."
    # It went on where it was: the model saw the earlier turn.
    assert result.stop_reason == "end_turn" and again.text() == "It is 42.Still 42."
    assert "compute 6*7" in json.dumps(fake_openai.requests[2].messages)

    # The app opens the same session from the same store and shows both turns.
    config = Config(model="test", working_dir=work, subagent_pool_size=0, checkpoints=False)
    app = FreeactApp(config, session_id=sid, executor=executor)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(200):
            if app.agent_ready:
                break
            await pilot.pause(0.05)
        conversation = app.main_screen.conversation
        users = [b.text for b in conversation.query(UserMessageBlock)]
        answers = [b.text for b in conversation.query(ResponseBlock)]
        outputs = [b.text for b in conversation.query(ExecutionOutputBlock)]
    assert users == ["compute 6*7", "and now?"]
    assert answers == ["It is 42.", "Still 42."]
    assert any("42" in text for text in outputs)


async def test_a_headless_run_session_replays(
    fake_openai: FakeOpenAI, tmp_path: Path, config_file: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    fake_openai.script(Reply("From run."))
    done = await asyncio.to_thread(
        subprocess.run,
        [*CLI, *fake_args(fake_openai, config_file), "run", "-o", "json", "hello run"],
        cwd=work, env=agent_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    sid = json.loads(done.stdout)["session_id"]
    client = RecordingClient()
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        listed = await conn.list_sessions(cwd=str(work))
        await conn.load_session(cwd=str(work), session_id=sid, mcp_servers=[])
    assert sid in [s.session_id for s in listed.sessions]
    assert [(u["sessionUpdate"], u["content"]["text"]) for u in client.updates] == [
        ("user_message_chunk", "hello run"),
        ("agent_message_chunk", "From run."),
    ]


async def test_a_freeact_session_in_a_freeact_project_replays(tmp_path: Path, config_file: Path) -> None:
    project = tmp_path / "project"
    sid = "0b9e8c7d-2a41-4f3e-8d5c-6e1f2a3b4c5d"
    shutil.copytree(FIXTURES / sid, project / ".freeact" / "sessions" / sid)
    trust.trust(trust.check(project))  # the user's own project: a folder's sessions are used once trusted
    client = RecordingClient()
    async with acp_agent(client, "--model", "test", "--config", str(config_file), cwd=project) as (conn, _):
        await conn.load_session(cwd=str(project), session_id=sid, mcp_servers=[])
        missing = None
        try:
            await conn.load_session(
                cwd=str(project), session_id="1b9e8c7d-2a41-4f3e-8d5c-6e1f2a3b4c5d", mcp_servers=[]
            )
        except Exception as exc:  # the SDK raises the JSON-RPC error
            missing = exc
    kinds = [u["sessionUpdate"] for u in client.updates]
    assert kinds[:3] == ["user_message_chunk", "agent_thought_chunk", "tool_call"]
    assert client.updates[0]["content"]["text"] == "What is 17 * 23?"
    assert client.updates[1]["content"]["text"] == "Compute it in the kernel."
    # freeact's first call met a syntax error, its second printed the answer.
    assert "SyntaxError" in content_texts(client.call_updates("call_1")[-1])
    assert client.statuses("call_2")[-1] == "completed" and "391" in content_texts(
        client.call_updates("call_2")[-1]
    )
    assert "391" in client.text()
    assert missing is not None and "no session" in str(missing)
    # Not copied into the app's own store: the project's store was used.
    assert not (paths.default_sessions_dir() / sid).exists()
