"""#44 (second attack), against the real ``freeact-tui acp`` over plain lines:

- a ``session/cancel`` notification with wrong-typed or missing params logged a traceback; now every
  notification that fails logs one line and the connection goes on;
- malformed ``mcpServers`` entries were dropped silently by the SDK's schema (the session opened without
  them); now ``session/new``/``load``/``resume``/``fork`` refuse them with -32602 naming the entry, and no
  session is made;
- a client's answer to ``session/request_permission`` that is not a valid response left the request open
  until its bound; now it fails that request at once (rejected, the call ends ``failed``).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.acp.test_acp_attacker import CODE_TOOL, _config, _ended_once, _open, _prompt, _work
from tests.acp.test_acp_faults import read, request, send, start
from tests.acp.test_acp_plain import _stop, _updates, answer_to
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]


def _log() -> str:
    log = Path(os.environ["FREEACT_TUI_HOME"]) / "data" / "logs" / "freeact-tui.log"
    return log.read_text() if log.exists() else ""


def test_malformed_notifications_log_one_line_each_and_the_connection_goes_on(tmp_path: Path) -> None:
    work = _work(tmp_path)
    proc = start("--model", "demo", "--config", str(_config(tmp_path)), cwd=work)
    try:
        sid = _open(proc, work)
        bad = [{"sessionId": 5}, {}, [1], "x", {"sessionId": [sid]}]
        for params in bad:
            send(proc, {"jsonrpc": "2.0", "method": "session/cancel", "params": params})
        send(proc, {"jsonrpc": "2.0", "method": "session/cancel"})
        send(proc, {"jsonrpc": "2.0", "method": "no/such/notification", "params": {}})
        send(proc, request(2, "session/list", {"cwd": str(work)}))
        listed, before = answer_to(proc, 2)
        assert "sessions" in listed["result"]  # the connection goes on
        assert all("id" not in m or "method" in m for m in before)  # a notification has no answer
    finally:
        _stop(proc)
        stderr = proc.stderr.read() if proc.stderr else ""
    log = _log()
    assert "Traceback" not in stderr and "Traceback" not in log, (stderr[-2000:], log[-3000:])
    ignored = [line for line in log.splitlines() if "notification" in line and "ignored" in line]
    assert len(ignored) == len(bad) + 2, ignored


BAD_SERVERS = [
    [{"name": "x"}],
    [{"name": "ok", "command": "/bin/true", "args": [], "env": []}, {"type": "http", "name": "h"}],
    [{"name": "s", "command": "/bin/true", "args": [1], "env": []}],
    [{"name": "s", "command": "/bin/true", "args": [], "env": [{"name": "A"}]}],
    ["not an object"],
]


def test_malformed_mcp_servers_are_refused_naming_the_entry_and_no_session_is_made(tmp_path: Path) -> None:
    work = _work(tmp_path)
    proc = start("--model", "demo", "--config", str(_config(tmp_path)), cwd=work)
    try:
        sid = _open(proc, work)
        send(proc, request(2, "session/prompt", _prompt(sid, "hello")))  # stored: it can be loaded
        answer_to(proc, 2)
        n = 10
        for servers in BAD_SERVERS:
            index = 0 if servers[0] != BAD_SERVERS[1][0] else 1
            for method, extra in (
                ("session/new", {}),
                ("session/load", {"sessionId": sid}),
                ("session/resume", {"sessionId": sid}),
                ("session/fork", {"sessionId": sid}),
            ):
                n += 1
                send(proc, request(n, method, {"cwd": str(work), "mcpServers": servers, **extra}))
                answer, _ = answer_to(proc, n)
                assert answer["error"]["code"] == -32602, (method, servers, answer)
                assert f"mcpServers[{index}]" in answer["error"]["message"], answer
        send(proc, request(99, "session/list", {"cwd": str(work)}))
        listed, _ = answer_to(proc, 99)
        assert [s["sessionId"] for s in listed["result"]["sessions"]] == [sid]  # nothing was made
    finally:
        _stop(proc)


@pytest.mark.parametrize(
    "answer",
    [
        {"jsonrpc": "2.0", "error": "no"},
        {"jsonrpc": "2.0"},
        {"jsonrpc": "1.0", "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}},
        {"jsonrpc": "2.0", "result": {}, "error": {"code": 1, "message": "both"}},
    ],
    ids=["error-string", "empty", "version", "both"],
)
def test_an_invalid_answer_to_a_permission_request_fails_it_at_once(
    tmp_path: Path, answer: dict[str, Any]
) -> None:
    work = _work(tmp_path)
    code = ToolCallReply(CODE_TOOL, {"code": "print(6 * 7)"}, call_id="c1")
    with FakeOpenAI() as server:
        server.script(Reply(tool_calls=[code]), Reply("Not run."))
        proc = start(
            "--base-url", server.url, "--model", "fake-model", "--config", str(_config(tmp_path)), cwd=work
        )
        try:
            sid = _open(proc, work)
            send(proc, request(2, "session/prompt", _prompt(sid)))
            seen: list[dict[str, Any]] = []
            while not (
                asked := seen[-1] if seen and seen[-1].get("method") == "session/request_permission" else None
            ):
                seen.append(read(proc.stdout))
            send(proc, "this line is not JSON")  # cannot be matched to the request: it goes on waiting
            sent = time.monotonic()
            send(proc, {**answer, "id": asked["id"]})
            done, more = answer_to(proc, 2)
            waited = time.monotonic() - sent
        finally:
            _stop(proc)
    updates = _updates(seen + more)
    assert done["result"]["stopReason"] == "end_turn"
    assert waited < 30, waited  # not the 30-minute bound
    assert _ended_once(updates, "c1") == "failed"
    assert "Invalid response from the client" in json.dumps(
        [u for u in updates if u.get("toolCallId") == "c1"]
    )
    assert "42" not in json.dumps(updates)
