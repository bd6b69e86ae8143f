"""#44 (second attack): a ``session/fork`` taken while the source waits on a permission leaves the source's
open turn alone.

Before: the fork closed the source's open call as "Interrupted by user." Now the fork copies the history up
to the source's last completed point, and the source's permission is still answerable: its call ends as the
client decides. Later (third attack): a fork taken in ANOTHER process copied the open turn whole ("is a
turn open?" was known only in the memory of the process running it); now where an open turn began is on
disk (``store/open_turn``), and every process's fork reads it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.acp.test_acp_attacker import CODE_TOOL, _config, _ended_once, _open, _prompt, _work
from tests.acp.test_acp_faults import read, request, send, start
from tests.acp.test_acp_plain import _stop, _updates, answer_to
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]


def _until_asked(proc: Any, seen: list[dict[str, Any]]) -> dict[str, Any]:
    while True:
        message = read(proc.stdout)
        seen.append(message)
        if message.get("method") == "session/request_permission":
            return message


@pytest.mark.parametrize("choice", ["allow_once", "reject_once"])
def test_a_fork_while_the_source_waits_on_a_permission_leaves_its_turn_alone(
    tmp_path: Path, choice: str
) -> None:
    work = _work(tmp_path)
    code = ToolCallReply(CODE_TOOL, {"code": "print(6 * 7)"}, call_id="c1")
    with FakeOpenAI() as server:
        server.script(
            Reply("first answer"), Reply(tool_calls=[code]), Reply("after the call"), Reply("in the fork")
        )
        proc = start(
            "--base-url", server.url, "--model", "fake-model", "--config", str(_config(tmp_path)), cwd=work
        )
        try:
            sid = _open(proc, work)
            send(proc, request(2, "session/prompt", _prompt(sid, "one")))
            answer_to(proc, 2)
            send(proc, request(3, "session/prompt", _prompt(sid, "two")))
            seen: list[dict[str, Any]] = []
            asked = _until_asked(proc, seen)
            send(proc, request(4, "session/fork", {"sessionId": sid, "cwd": str(work), "mcpServers": []}))
            forked, during = answer_to(proc, 4)
            seen += during
            fork = forked["result"]["sessionId"]
            result = {"outcome": {"outcome": "selected", "optionId": choice}}
            send(proc, {"jsonrpc": "2.0", "id": asked["id"], "result": result})
            done, more = answer_to(proc, 3)
            send(proc, request(5, "session/prompt", _prompt(fork, "three")))
            in_fork, _ = answer_to(proc, 5)
        finally:
            _stop(proc)
    updates = _updates(seen + more)
    assert done["result"]["stopReason"] == "end_turn"
    status = _ended_once(updates, "c1")
    c1 = json.dumps([u for u in updates if u.get("toolCallId") == "c1"])
    assert "Interrupted by user" not in c1, c1
    if choice == "allow_once":
        assert status == "completed" and "42" in c1, c1
    else:
        assert status == "failed" and "42" not in c1, c1
    assert in_fork["result"]["stopReason"] == "end_turn"
    sent = json.dumps(server.requests[-1].body["messages"])  # the fork's history: up to the completed turn
    assert "one" in sent and "first answer" in sent and "print(6 * 7)" not in sent, sent


def test_a_fork_in_another_process_leaves_the_open_turn_out(tmp_path: Path) -> None:
    work = _work(tmp_path)
    code = ToolCallReply(CODE_TOOL, {"code": "print(6 * 7)"}, call_id="c1")
    with FakeOpenAI() as server:
        server.script(Reply("first answer"), Reply(tool_calls=[code]), Reply("in the fork"))
        args = ("--base-url", server.url, "--model", "fake-model", "--config", str(_config(tmp_path)))
        source = start(*args, cwd=work)
        other = start(*args, cwd=work)  # the same store: the same home
        try:
            sid = _open(source, work)
            send(source, request(2, "session/prompt", _prompt(sid, "one")))
            answer_to(source, 2)
            send(source, request(3, "session/prompt", _prompt(sid, "two")))
            _until_asked(source, [])  # the source's turn is open, waiting on its permission
            send(other, request(0, "initialize", {"protocolVersion": 1}))
            answer_to(other, 0)
            send(other, request(1, "session/fork", {"sessionId": sid, "cwd": str(work), "mcpServers": []}))
            fork = answer_to(other, 1)[0]["result"]["sessionId"]
            send(other, request(2, "session/prompt", _prompt(fork, "three")))
            in_fork, _ = answer_to(other, 2)
        finally:
            _stop(other)
            _stop(source)
    assert in_fork["result"]["stopReason"] == "end_turn"
    sent = json.dumps(server.requests[-1].body["messages"])  # the fork's history: up to the completed turn
    assert "first answer" in sent and "three" in sent, sent
    assert "print(6 * 7)" not in sent and "two" not in sent, sent
