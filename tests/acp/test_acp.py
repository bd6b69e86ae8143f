"""``freeact-tui acp`` driven by the ACP SDK's own client side (a real subprocess, real kernels).

The model is the fake OpenAI server on 127.0.0.1 (``--base-url``); everything else is real: the
agent process, its kernel, the session store, the permission rules file.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.schema import HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer

from freeact_tui.acp.server import client_mcp_servers
from freeact_tui.permissions.cells import cell_pattern
from freeact_tui.project import paths
from freeact_tui.store.sessions import SessionStore
from tests.acp_client import RecordingClient, acp_agent, content_texts
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.helpers import fake_args

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]

CODE_TOOL = "ipybox_execute_ipython_cell"


def code_call(code: str, call_id: str) -> Reply:
    return Reply(tool_calls=[ToolCallReply(CODE_TOOL, {"code": code}, call_id=call_id)])


def main_lines(session_id: str) -> list[dict[str, Any]]:
    files = list(Path(os.environ["FREEACT_TUI_HOME"]).rglob(f"{session_id}/main.jsonl"))
    assert len(files) == 1, files
    return [json.loads(line) for line in files[0].read_text().splitlines()]


async def test_text_turn_streams_chunks_and_lands_in_the_app_store(
    fake_openai: FakeOpenAI, work: Path, config_file: Path
) -> None:
    fake_openai.script(Reply("The answer is 42.", chunk=3))
    client = RecordingClient()
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, proc):
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        assert session.modes is not None and session.modes.current_mode_id == "ask"
        result = await conn.prompt(session_id=session.session_id, prompt=[text_block("what is 6*7?")])
        listed = await conn.list_sessions(cwd=str(work))
    assert proc.returncode == 0  # stdin closed: it ended by itself
    assert result.stop_reason == "end_turn"
    chunks = client.of("agent_message_chunk")
    assert len(chunks) > 1 and client.text() == "The answer is 42."
    assert fake_openai.requests[0].last_user_text() == "what is 6*7?"
    # The app's store: listed over ACP and by the store itself, the answer in main.jsonl.
    assert [s.session_id for s in listed.sessions] == [session.session_id]
    store = SessionStore(paths.default_sessions_dir())
    assert [i.id for i in store.list()] == [session.session_id]
    assert "The answer is 42." in json.dumps(main_lines(session.session_id))


async def test_code_action_and_its_shell_part_are_tool_calls_asked_and_streamed(
    fake_openai: FakeOpenAI, work: Path, config_file: Path
) -> None:
    code = "print(6 * 7)\n!touch made-by-part && echo part-ran"
    fake_openai.script(code_call(code, "call_1"), Reply("It is 42."))
    client = RecordingClient(["allow_once", "allow_once"])
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        result = await conn.prompt(session_id=session.session_id, prompt=[text_block("compute")])
    assert result.stop_reason == "end_turn"
    # The code action, then its shell command: each asked, with the four options of the app's dialog.
    assert [t.tool_call_id for t, _ in client.asked] == ["call_1", "call_1/1"]
    assert [o.kind for o in client.asked[0][1]] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    start = client.of("tool_call")[0]
    assert (start["toolCallId"], start["kind"], start["status"]) == ("call_1", "execute", "pending")
    assert "print(6 * 7)" in content_texts(start)
    part = client.of("tool_call")[1]
    assert (part["toolCallId"], part["title"]) == ("call_1/1", "$ touch made-by-part")
    assert [u["toolCallId"] for u in client.of("tool_call")] == [
        "call_1",
        "call_1/1",
        "call_1/2",
    ]  # echo: allowed by rule
    assert client.statuses("call_1")[-1] == "completed"
    assert client.statuses("call_1/1")[-1] == "completed"
    final = client.call_updates("call_1")[-1]
    assert "42" in content_texts(final) and "part-ran" in content_texts(final)
    assert client.text() == "It is 42."
    assert (work / "made-by-part").exists()


async def test_always_rules_are_saved_and_apply_then_reject_ends_the_call(
    fake_openai: FakeOpenAI, work: Path, config_file: Path
) -> None:
    fake_openai.script(
        code_call("print('first')", "call_1"),
        Reply("done 1"),
        code_call("print('first')", "call_2"),
        Reply("done 2"),
        code_call("open('second.txt', 'w').write('2')", "call_3"),  # wider than computing: asked
        Reply("refused"),
    )
    client = RecordingClient(["allow_always", "reject_always"])
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        sid = session.session_id
        for prompt in ("one", "two", "three"):
            result = await conn.prompt(session_id=sid, prompt=[text_block(prompt)])
            assert result.stop_reason == "end_turn"
    # call_2 matched the saved rule: not asked, shown approved at once.
    assert [t.tool_call_id for t, _ in client.asked] == ["call_1", "call_3"]
    assert client.statuses("call_2") == ["in_progress", "in_progress", "completed"]
    # call_3 was rejected for good: failed, the model told, a deny rule saved.
    assert client.statuses("call_3")[-1] == "failed"
    assert "Rejected by the user" in content_texts(client.call_updates("call_3")[-1])
    rules = json.loads(paths.permissions_file().read_text())
    # "always allow" on code saves what it does (it only computes), as in the app: never a prefix other
    # code could follow; "always deny" the exact cell (a fingerprint)
    assert {"kind": "code", "pattern": "effects:computes"} in rules["allow"]
    assert {"kind": "code", "pattern": cell_pattern("open('second.txt', 'w').write('2')")} in rules["deny"]
    assert not (work / "second.txt").exists()
    assert "second" not in json.dumps(
        [u for u in client.updates if u.get("toolCallId") == "call_3" and u.get("status") == "completed"]
    )


async def test_file_edit_is_an_edit_with_location_and_diff(
    fake_openai: FakeOpenAI, work: Path, config_file: Path
) -> None:
    (work / "notes.txt").write_text("alpha\nbeta\n")
    edit = {"path": "notes.txt", "edits": [{"old_text": "beta", "new_text": "gamma"}]}
    fake_openai.script(
        Reply(tool_calls=[ToolCallReply("filesystem_edit_text_file", edit, call_id="call_e")]),
        Reply("edited"),
    )
    client = RecordingClient(["allow_once"])
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("edit it")])
    start = client.of("tool_call")[0]
    assert start["kind"] == "edit"
    assert start["locations"] == [{"path": str((work / "notes.txt").resolve())}]
    diff = start["content"][0]
    assert (diff["type"], diff["oldText"], diff["newText"]) == ("diff", "alpha\nbeta\n", "alpha\ngamma\n")
    assert client.statuses("call_e")[-1] == "completed"
    assert (work / "notes.txt").read_text() == "alpha\ngamma\n"


async def test_cancel_stops_a_running_action_within_a_second_and_the_session_goes_on(
    fake_openai: FakeOpenAI, work: Path, config_file: Path
) -> None:
    fake_openai.script(
        code_call("import time\nprint('sleeping', flush=True)\ntime.sleep(60)", "call_s"),
        Reply("after cancel"),
    )
    client = RecordingClient(["allow_once"])
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        sid = session.session_id
        turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("sleep")]))
        # Cancel once the kernel runs it (its output arrived, after the code itself as the first content).
        await client.until(lambda: any(len(u.get("content", [])) > 1 for u in client.call_updates("call_s")))
        started = time.perf_counter()
        await conn.cancel(session_id=sid)
        result = await asyncio.wait_for(turn, 10)
        elapsed = time.perf_counter() - started
        again = await conn.prompt(session_id=sid, prompt=[text_block("still there?")])
    assert result.stop_reason == "cancelled"
    assert elapsed < 1.0, elapsed
    assert client.statuses("call_s")[-1] == "failed"
    # History consistent: the next request carries the interrupted call's result, and it answers.
    assert again.stop_reason == "end_turn" and client.text().endswith("after cancel")
    # the model is told what the cancelled cell printed before it was stopped, then that it was stopped
    (result,) = [r.lower() for r in fake_openai.requests[1].tool_results()]
    assert result.endswith("interrupted by user.")


async def test_permission_never_answered_then_cancelled_rejects(
    fake_openai: FakeOpenAI, work: Path, config_file: Path
) -> None:
    fake_openai.script(code_call("print('never')", "call_n"), Reply("fine"))
    client = RecordingClient(["never"])
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        sid = session.session_id
        turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("go")]))
        await asyncio.wait_for(client.asked_event.wait(), 60)
        started = time.perf_counter()
        await conn.cancel(session_id=sid)
        result = await asyncio.wait_for(turn, 10)
        elapsed = time.perf_counter() - started
        again = await conn.prompt(session_id=sid, prompt=[text_block("next")])
    assert result.stop_reason == "cancelled" and elapsed < 1.0, elapsed
    assert again.stop_reason == "end_turn"
    assert fake_openai.requests[1].tool_results() != []  # the unanswered call got a result: history valid
    assert client.statuses("call_n")[0] == "pending" and client.statuses("call_n")[-1] == "failed"
    assert "never" not in "".join(json.dumps(u) for u in client.updates if u.get("status") == "completed")


async def test_auto_mode_runs_without_asking(fake_openai: FakeOpenAI, work: Path, config_file: Path) -> None:
    fake_openai.script(code_call("print(1 + 1)", "call_a"), Reply("two"))
    client = RecordingClient()
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        await conn.set_session_mode(session_id=session.session_id, mode_id="auto")
        await conn.prompt(session_id=session.session_id, prompt=[text_block("add")])
    assert client.asked == []
    assert client.of("current_mode_update")[0]["currentModeId"] == "auto"
    assert client.statuses("call_a")[-1] == "completed"


async def test_in_folder_mode_runs_in_folder_code_and_asks_for_wider(
    fake_openai: FakeOpenAI, work: Path, config_file: Path
) -> None:
    fake_openai.script(
        code_call("open('inside.txt', 'w').write('x')", "call_i"),
        code_call("import os\nos.system('true')", "call_o"),
        Reply("done"),
    )
    client = RecordingClient(["reject_once"])
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        assert "in-folder" in [m.id for m in session.modes.available_modes]  # type: ignore[union-attr]
        await conn.set_session_mode(session_id=session.session_id, mode_id="in-folder")
        await conn.prompt(session_id=session.session_id, prompt=[text_block("write")])
    assert (work / "inside.txt").exists()
    assert client.statuses("call_i")[-1] == "completed"
    assert len(client.asked) == 1  # only the code that runs a program was asked
    # the options say the rule in words: this exact cell, not a hash
    assert client.asked[0][1][1].name == (
        "Always allow one exact cell (comments and formatting aside), in this folder only"
    )
    assert client.of("current_mode_update")[0]["currentModeId"] == "in-folder"


def test_client_mcp_servers_join_the_config_and_sse_is_refused() -> None:
    from acp import RequestError
    from acp.schema import EnvVariable

    servers = client_mcp_servers(
        [
            McpServerStdio(
                name="calc", command="python", args=["calc.py"], env=[EnvVariable(name="A", value="1")]
            ),
            HttpMcpServer(
                type="http",
                name="web",
                url="http://127.0.0.1:9/mcp",
                headers=[HttpHeader(name="X", value="y")],
            ),
        ]
    )
    assert (servers["calc"].command, servers["calc"].args, servers["calc"].env) == (
        "python",
        ["calc.py"],
        {"A": "1"},
    )
    assert (servers["web"].url, servers["web"].headers) == ("http://127.0.0.1:9/mcp", {"X": "y"})
    with pytest.raises(RequestError, match="sse"):
        client_mcp_servers([SseMcpServer(type="sse", name="old", url="http://127.0.0.1:9/sse", headers=[])])


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        ({"outcome": "selected", "optionId": "allow_once"}, (True, None, None)),
        ({"outcome": "selected", "optionId": "allow_always"}, (True, "always", "RULE")),
        ({"outcome": "selected", "optionId": "reject_once"}, (False, None, None)),
        ({"outcome": "selected", "optionId": "reject_always"}, (False, "always", "RULE")),
        ({"outcome": "cancelled"}, (False, None, None)),
        ({"outcome": "selected", "optionId": "maybe"}, (False, None, None)),
    ],
)
def test_permission_answers_are_decisions(outcome: dict[str, str], expected: tuple[object, ...]) -> None:
    from acp.schema import RequestPermissionResponse

    from freeact_tui.acp.permission import decision_for, permission_options
    from freeact_tui.permissions.patterns import proposed_pattern
    from freeact_tui.toolcalls import ShellAction

    call = ShellAction("git status")
    rule = proposed_pattern(call)  # the rule the app's dialog proposes: the same exactness
    decision = decision_for(RequestPermissionResponse.model_validate({"outcome": outcome}), call)
    assert (decision.approved, decision.remember, decision.pattern) == tuple(
        rule if v == "RULE" else v for v in expected
    )
    # ``git status``: the folder's own repository, so kept with the folder (#42)
    assert [o.name for o in permission_options(call)][1] == (
        f"Always allow shell commands matching {rule}, in this folder only"
    )
    absolute = ShellAction("rm /srv/x.txt")  # names only an absolute path: the same in every folder
    assert [o.name for o in permission_options(absolute)][1] == (
        f"Always allow shell commands matching {proposed_pattern(absolute)}"
    )


async def test_attached_files_and_images_reach_the_model_and_audio_is_refused(
    fake_openai: FakeOpenAI, work: Path, config_file: Path
) -> None:
    from acp import RequestError, audio_block, embedded_text_resource, image_block, resource_block

    fake_openai.script(Reply("seen"))
    pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    unsaved = embedded_text_resource(f"file://{work}/draft.py", "x = 'unsaved buffer'\n")
    client = RecordingClient()
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        prompt = [text_block("look"), resource_block(unsaved), image_block(pixel, "image/png")]
        await conn.prompt(session_id=sid, prompt=prompt)
        with pytest.raises(RequestError, match="audio"):
            await conn.prompt(session_id=sid, prompt=[audio_block("AAAA", "audio/wav")])
    sent = json.dumps(fake_openai.requests[0].messages[-1])
    assert f"Contents of {work}/draft.py" in sent and "unsaved buffer" in sent
    assert "data:image/png;base64," in sent
    assert fake_openai.count == 1  # the refused prompt never reached the model


async def test_a_subagent_task_is_a_tool_call_with_its_answer(
    fake_openai: FakeOpenAI, work: Path, config_file: Path
) -> None:
    task = {"prompt": "Say hello from the subagent.", "max_turns": 3}
    fake_openai.script(
        Reply(tool_calls=[ToolCallReply("subagent_task", task, call_id="call_sub")]),
        Reply("hello from the subagent"),  # the subagent's own request
        Reply("The subagent said hello."),
    )
    client = RecordingClient(["allow_once"])
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        result = await conn.prompt(session_id=sid, prompt=[text_block("delegate")])
    assert result.stop_reason == "end_turn"
    start = client.of("tool_call")[0]
    assert (start["toolCallId"], start["kind"]) == ("call_sub", "think")
    assert start["title"] == "Subagent: Say hello from the subagent."
    assert [t.tool_call_id for t, _ in client.asked] == ["call_sub"]
    assert client.statuses("call_sub")[-1] == "completed"
    assert "hello from the subagent" in content_texts(client.call_updates("call_sub")[-1])
    # The subagent's text stays inside its call; the conversation shows the main agent's answer only.
    assert client.text() == "The subagent said hello."
