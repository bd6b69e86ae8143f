"""ACP sessions as the best ACP agents have them, against the real ``freeact-tui acp`` (the SDK's client):
one error for an unknown session on every method, prompts queued in order, ``session/resume`` and
``session/fork``, the model as a config option (stored with the session), ``usage_update`` after each
request, and an editor's folder trusted only when the client says so."""

from __future__ import annotations

import asyncio
import json
import os
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from tests.acp_client import RecordingClient, acp_agent
from tests.fake_openai import FakeOpenAI, Reply
from tests.helpers import fake_args

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]


def posts(server: FakeOpenAI) -> list[Any]:
    return [r for r in server.requests if r.method == "POST"]


def stored_main(session_id: str) -> str:
    (path,) = Path(os.environ["FREEACT_TUI_HOME"]).rglob(f"{session_id}/main.jsonl")
    return path.read_text()


def trust_record() -> dict[str, Any]:
    (path,) = Path(os.environ["FREEACT_TUI_HOME"]).rglob("trusted-folders.json")
    record: dict[str, Any] = json.loads(path.read_text())
    return record


def system_text(request: Any) -> str:
    return "\n".join(str(m.get("content", "")) for m in request.messages if m.get("role") == "system")


async def test_an_unknown_session_is_the_same_error_on_every_method(
    fake_openai: FakeOpenAI, work: Path, config_file: Path
) -> None:
    client = RecordingClient()
    unknown = str(uuid.uuid4())
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        calls = {
            "prompt": lambda: conn.prompt(session_id=unknown, prompt=[text_block("hi")]),
            "close": lambda: conn.close_session(session_id=unknown),
            "set_mode": lambda: conn.set_session_mode(session_id=unknown, mode_id="ask"),
            "set_config_option": lambda: conn.set_config_option(
                session_id=unknown, config_id="model", value="fake-model"
            ),
            "load": lambda: conn.load_session(cwd=str(work), session_id=unknown, mcp_servers=[]),
            "resume": lambda: conn.resume_session(cwd=str(work), session_id=unknown, mcp_servers=[]),
            "fork": lambda: conn.fork_session(cwd=str(work), session_id=unknown, mcp_servers=[]),
        }
        codes: dict[str, int] = {}
        for name, call in calls.items():
            with pytest.raises(RequestError) as caught:
                await asyncio.wait_for(call(), 30)
            codes[name] = caught.value.code
            assert unknown in str(caught.value.data or caught.value), name
    assert codes == dict.fromkeys(calls, -32602)


async def test_prompts_sent_while_one_runs_are_answered_in_turn(
    fake_openai: FakeOpenAI, work: Path, config_file: Path
) -> None:
    fake_openai.script(Reply("first answer", chunk=2), Reply("second answer"), Reply("third answer"))
    client = RecordingClient()
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        results = await asyncio.gather(
            *(conn.prompt(session_id=sid, prompt=[text_block(f"prompt {n}")]) for n in (1, 2, 3))
        )
    assert [r.stop_reason for r in results] == ["end_turn"] * 3
    assert [r.last_user_text() for r in posts(fake_openai)] == ["prompt 1", "prompt 2", "prompt 3"]
    assert client.text() == "first answersecond answerthird answer"


async def test_resume_opens_without_replay_and_fork_starts_from_the_conversation(
    fake_openai: FakeOpenAI, work: Path, config_file: Path
) -> None:
    fake_openai.script(Reply("The word is kiwi."), Reply("Still kiwi."), Reply("Forked: kiwi."))
    async with acp_agent(RecordingClient(), *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("remember kiwi")])

    client = RecordingClient()
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        resumed = await conn.resume_session(cwd=str(work), session_id=sid, mcp_servers=[])
        assert resumed.modes is not None
        announced = ("usage_update", "available_commands_update")  # what an open announces, not a replay
        assert not [u for u in client.updates if u["sessionUpdate"] not in announced]  # no replay
        await conn.prompt(session_id=sid, prompt=[text_block("which word?")])
        forked = await conn.fork_session(cwd=str(work), session_id=sid, mcp_servers=[])
        assert forked.session_id != sid
        await conn.prompt(session_id=forked.session_id, prompt=[text_block("in the fork?")])
    requests = posts(fake_openai)
    history = json.dumps(requests[1].messages)
    assert "remember kiwi" in history and "The word is kiwi." in history
    fork_history = json.dumps(requests[2].messages)
    assert "which word?" in fork_history and "Still kiwi." in fork_history
    assert "in the fork?" not in stored_main(sid)  # the source goes on unchanged


async def test_the_model_is_a_config_option_used_by_the_next_prompt_and_stored(
    work: Path, config_file: Path
) -> None:
    with FakeOpenAI(models=["fake-model", "other-model"]) as server:
        server.script(Reply("one"), Reply("two"), Reply("three"))
        client = RecordingClient()
        async with acp_agent(client, *fake_args(server, config_file), cwd=work) as (conn, _):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            (option,) = list(new.config_options or [])
            assert option.id == "model" and option.current_value == "fake-model"
            offered = [o.value for o in option.options]  # type: ignore[union-attr]
            assert {"fake-model", "other-model", "demo"} <= set(offered)
            await conn.prompt(session_id=new.session_id, prompt=[text_block("a")])
            answer = await conn.set_config_option(
                session_id=new.session_id, config_id="model", value="other-model"
            )
            assert [o.current_value for o in answer.config_options] == ["other-model"]
            await conn.prompt(session_id=new.session_id, prompt=[text_block("b")])
            with pytest.raises(RequestError) as caught:
                await conn.set_config_option(session_id=new.session_id, config_id="model", value="no-such")
            assert caught.value.code == -32602
        # stored with the session: a new process opens it with the chosen model
        async with acp_agent(RecordingClient(), *fake_args(server, config_file), cwd=work) as (conn, _):
            loaded = await conn.load_session(cwd=str(work), session_id=new.session_id, mcp_servers=[])
            assert [o.current_value for o in loaded.config_options or []] == ["other-model"]
            await conn.prompt(session_id=new.session_id, prompt=[text_block("c")])
        models = [r.body.get("model") for r in posts(server)]
    assert models == ["fake-model", "other-model", "other-model"]
    assert client.of("config_option_update")


async def test_usage_update_after_each_request(
    fake_openai: FakeOpenAI, work: Path, config_file: Path
) -> None:
    fake_openai.script(Reply("hello there"))
    client = RecordingClient()
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("hi")])
    usage = client.of("usage_update")
    assert len(usage) == 2  # the open's (the fill of an empty session), then the request's
    assert usage[0]["_meta"]["freeact-tui"]["requests"] == 0 and usage[0]["used"] < usage[1]["used"]
    assert 0 < usage[1]["used"] <= usage[1]["size"]
    assert usage[1]["_meta"]["freeact-tui"]["requests"] == 1


MARKER = "project-rule-7f3a"


@pytest.mark.parametrize("answer", ["trust_folder", "ignore_project_files", "cancelled"])
async def test_an_editor_folder_is_trusted_only_when_the_client_says_so(
    fake_openai: FakeOpenAI, tmp_path: Path, config_file: Path, answer: str
) -> None:
    launch = tmp_path / "launch"  # --trust covers this folder (where it starts), not the editor's
    launch.mkdir()
    (launch / "AGENTS.md").write_text("launch folder rules\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text(f"Always say {MARKER}.\n")
    fake_openai.script(Reply("ok"), Reply("ok again"))
    client = RecordingClient([answer])
    async with acp_agent(client, *fake_args(fake_openai, config_file), "--trust", cwd=launch) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("hi")])
        await conn.prompt(session_id=sid, prompt=[text_block("again")])
    (asked, options) = client.asked[0]
    assert len(client.asked) == 1  # once per session
    listing = json.dumps(asked.model_dump(mode="json"))
    assert "AGENTS.md" in listing and str(project) in asked.title
    assert {o.option_id for o in options} == {"trust_folder", "ignore_project_files"}
    trusted = answer == "trust_folder"
    assert (MARKER in system_text(posts(fake_openai)[0])) is trusted
    record = trust_record()
    assert (str(project.resolve()) in record["folders"]) is trusted
    assert str(launch.resolve()) in record["folders"]  # --trust: the folder it printed


# Words that exist only in the terminal app: its keys and its slash commands.
APP_ONLY = re.compile(r"\b(Esc|Enter|Ctrl\+\w|F\d{1,2})\b|(?<![\w/])/(resume|sessions|new|model|help)\b")


async def test_the_demo_model_over_acp_names_no_terminal_keys(work: Path) -> None:
    from freeact_tui.demo.model import TOUR, tour

    assert APP_ONLY.search(TOUR)  # the app's tour names them (the pattern finds them)
    client = RecordingClient()
    async with acp_agent(client, "--model", "demo", cwd=work) as (conn, _):
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("hi, what is this?")])
    said = client.text()
    assert said.strip() == tour("acp").strip()
    assert not APP_ONLY.search(said), APP_ONLY.search(said)


async def test_commands_are_announced_and_a_command_prompt_runs_them(
    fake_openai: FakeOpenAI, work: Path, config_file: Path
) -> None:
    fake_openai.script(Reply("planned"), Reply("a path, not a command"))
    client = RecordingClient()
    async with acp_agent(client, *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        await client.until(lambda: bool(client.of("available_commands_update")))
        (announced,) = client.of("available_commands_update")
        commands = {c["name"]: c for c in announced["availableCommands"]}
        assert {"compact", "context", "skills", "help"} <= set(commands)
        assert not {"quit", "theme", "copy", "new", "resume", "model"} & set(commands)  # the app's own
        assert all(c["description"] and "\n" not in c["description"] for c in commands.values())
        assert commands["compact"]["input"]["hint"]
        skills = [n for n, c in commands.items() if c["description"].startswith("Skill: ")]
        assert skills  # the bundled ones at least
        answer = await conn.prompt(session_id=sid, prompt=[text_block("/context")])
        assert answer.stop_reason == "end_turn" and client.text().startswith("Context: about")
        assert posts(fake_openai) == []  # a command is not a prompt to the model
        await conn.prompt(session_id=sid, prompt=[text_block(f"/{skills[0]} the release")])
        await conn.prompt(session_id=sid, prompt=[text_block("/usr/bin/env is where?")])
    sent = [r.last_user_text() for r in posts(fake_openai)]
    assert sent[0] == f'<skill name="{skills[0]}">the release</skill>'
    assert sent[1] == "/usr/bin/env is where?"


async def test_a_session_with_no_prompt_yet_opens_in_another_process(
    fake_openai: FakeOpenAI, work: Path, config_file: Path
) -> None:
    """acpx runs one process per command: ``sessions new``, then ``prompt`` resumes it elsewhere."""
    fake_openai.script(Reply("here"))
    async with acp_agent(RecordingClient(), *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
    async with acp_agent(RecordingClient(), *fake_args(fake_openai, config_file), cwd=work) as (conn, _):
        await conn.resume_session(cwd=str(work), session_id=sid, mcp_servers=[])
        answer = await conn.prompt(session_id=sid, prompt=[text_block("still there?")])
    assert answer.stop_reason == "end_turn"
    assert "still there?" in stored_main(sid)
