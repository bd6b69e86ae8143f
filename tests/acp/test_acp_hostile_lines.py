"""#44 end to end: what the ACP attacker sent, to the real ``freeact-tui acp`` as plain lines.

F1: a ``session/cancel`` in the same write as its ``session/prompt`` left the prompt unanswered forever
(and every later prompt queued behind it; a ``session/close`` answered but the prompt never did). F2-F4:
a message nested 1,200 levels killed the server, a lone surrogate in a method name got no answer and in
a prompt poisoned the session, ``1e400`` as an id was echoed as ``Infinity``. Now each request line gets
exactly one answer, stdout holds only strict JSON lines, and the session goes on answering.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.acp.test_acp_faults import request, start
from tests.fake_openai import FakeOpenAI, Reply
from tests.helpers import fake_args

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]


def strict(line: str) -> dict[str, Any]:
    """One line of stdout as strict JSON (no NaN/Infinity), a JSON-RPC 2.0 message."""

    def refuse(name: str) -> Any:
        raise AssertionError(f"not JSON on stdout: {name} in {line[:200]!r}")

    message = json.loads(line, parse_constant=refuse)
    assert isinstance(message, dict) and message["jsonrpc"] == "2.0", line[:200]
    return message


class Lines:
    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.sid = ""
        self.nulls: list[dict[str, Any]] = []
        """The answers with ``id: null`` (to lines that could not be read)."""

    def write(self, *lines: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("".join(line + "\n" for line in lines))  # one write
        self.proc.stdin.flush()

    def answers(self, *ids: Any) -> dict[Any, dict[str, Any]]:
        """The answers to ``ids`` (each exactly once), reading every message before them strictly."""
        assert self.proc.stdout is not None
        got: dict[Any, dict[str, Any]] = {}
        while set(ids) - set(got):
            line = self.proc.stdout.readline()
            assert line, "stdout closed"
            message = strict(line)
            if "method" in message:
                continue
            if message.get("id") is None:
                self.nulls.append(message)
                continue
            assert message["id"] not in got, ("answered twice", message)
            got[message["id"]] = message
        return got


def prompt(sid: str, id_: int, text: str = "hi") -> str:
    return json.dumps(
        request(id_, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]})
    )


@pytest.fixture
def lines(tmp_path: Path, fake_openai: FakeOpenAI) -> Any:
    config = tmp_path / "acp.toml"
    config.write_text('subagent_pool_size = 0\ncheckpoints = false\naction_protocol = "tools"\n')
    proc = start(*fake_args(fake_openai), "--config", str(config), cwd=tmp_path)
    client = Lines(proc)
    try:
        client.write(json.dumps(request(0, "initialize", {"protocolVersion": 1})))
        client.answers(0)
        client.write(json.dumps(request(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []})))
        client.sid = client.answers(1)[1]["result"]["sessionId"]
        yield client
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0


def test_a_cancel_in_the_same_write_as_its_prompt_ends_it_and_the_session_goes_on(
    lines: Any, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply("after the cancel"))
    cancel = json.dumps({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": lines.sid}})
    lines.write(prompt(lines.sid, 10), cancel)
    assert lines.answers(10)[10]["result"]["stopReason"] == "cancelled"
    lines.write(prompt(lines.sid, 11, "again"))
    assert lines.answers(11)[11]["result"]["stopReason"] == "end_turn"
    # and a close in the same write as a prompt: both answer, the prompt cancelled
    lines.write(prompt(lines.sid, 12), json.dumps(request(13, "session/close", {"sessionId": lines.sid})))
    got = lines.answers(12, 13)
    assert got[12]["result"]["stopReason"] == "cancelled" and got[13]["result"] == {}


def test_hostile_lines_each_get_one_answer_and_the_session_goes_on(
    lines: Any, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply("one"), Reply("two"))
    deep = '{"jsonrpc":"2.0","id":20,"method":"session/list","params":{"x":' + "[" * 1200 + "]" * 1200 + "}}"
    lines.write(
        deep,
        '{"jsonrpc":"2.0","id":21,"method":"session/\\ud800"}',
        '{"jsonrpc":"2.0","id":1e400,"method":"session/list","params":{}}',
        '{"jsonrpc":"2.0","id":NaN,"method":"session/list","params":{}}',
        '{"jsonrpc":"2.0","id":22,"method":"initialize","params":{"protocolVersion":1e400}}',
    )
    got = lines.answers(21)
    assert got[21]["error"]["code"] == -32601
    lines.write(prompt(lines.sid, 23, "hi \ud800 there"))  # a lone surrogate in the prompt text
    # the four lines that cannot be read were each answered once, with id null, before the prompt's answer
    assert lines.answers(23)[23]["result"]["stopReason"] == "end_turn"
    assert [m["error"]["code"] for m in lines.nulls] == [-32700] * 4, lines.nulls
    lines.write(prompt(lines.sid, 24, "and now?"))  # the session is not poisoned
    assert lines.answers(24)[24]["result"]["stopReason"] == "end_turn"
    sent = fake_openai.requests[-1].body["messages"]
    assert "hi \ufffd there" in json.dumps(sent, ensure_ascii=False)


def test_lenient_where_the_meaning_is_clear_and_invalid_params_where_it_is_not(
    lines: Any, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    fake_openai.script(Reply("after"))
    cancel = json.dumps(
        request(30, "session/cancel", {"sessionId": lines.sid})
    )  # a notification, sent with an id
    lines.write(prompt(lines.sid, 31), cancel)
    got = lines.answers(30, 31)
    assert got[30]["result"] == {} and got[31]["result"]["stopReason"] == "cancelled"
    set_model = {"jsonrpc": "2.0", "id": 32, "method": "session/set_model", "params": [lines.sid]}
    lines.write(json.dumps(set_model), json.dumps(request(33, "session/list", {"cwd": "relative/dir"})))
    (tmp_path / "a-file").write_text("x")
    lines.write(json.dumps(request(34, "session/list", {"cwd": str(tmp_path / "a-file")})))
    got = lines.answers(32, 33, 34)
    assert [got[i]["error"]["code"] for i in (32, 33, 34)] == [-32602] * 3


def test_bad_client_capabilities_in_the_first_initialize_are_invalid_params(tmp_path: Path) -> None:
    proc = start(cwd=tmp_path)
    client = Lines(proc)
    try:
        params = {"protocolVersion": 1, "clientCapabilities": {"fs": "yes", "terminal": 3}}
        client.write(json.dumps(request(0, "initialize", params)))
        assert client.answers(0)[0]["error"]["code"] == -32602
        client.write(json.dumps(request(1, "initialize", {"protocolVersion": 1})))
        assert "result" in client.answers(1)[1]
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
