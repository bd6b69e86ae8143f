"""#44 leftover: a line that cannot be read, sent while a permission request waits (a client that meant it as
the answer). JSON-RPC cannot match it to the request, so it gets -32700 with ``id: null`` and answers or
cancels nothing; the client is told in the session too: the waiting call's content says its answer could
not be read and that the request still waits. A valid answer afterwards decides the call as usual.

Before: only the -32700; the call showed nothing, and the user waited for the bound (30 minutes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.acp.test_acp_attacker import CODE_TOOL, _config, _ended_once, _open, _prompt, _work
from tests.acp.test_acp_faults import read, request, send, start
from tests.acp.test_acp_fork_live import _until_asked
from tests.acp.test_acp_plain import _stop, _updates, answer_to
from tests.acp_client import content_texts
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]


@pytest.mark.parametrize("line", ["this is not json", '{"jsonrpc": "2.0", "result": {"outcome": {"outcome": "selected"'])
def test_an_unreadable_answer_to_a_permission_request_is_noted_and_answers_nothing(
    tmp_path: Path, line: str
) -> None:
    work = _work(tmp_path)
    code = ToolCallReply(CODE_TOOL, {"code": "print(6 * 7)"}, call_id="c1")
    with FakeOpenAI() as server:
        server.script(Reply(tool_calls=[code]), Reply("done"))
        proc = start(
            "--base-url", server.url, "--model", "fake-model", "--config", str(_config(tmp_path)), cwd=work
        )
        try:
            sid = _open(proc, work)
            send(proc, request(2, "session/prompt", _prompt(sid)))
            seen: list[dict[str, Any]] = []
            asked = _until_asked(proc, seen)
            send(proc, line)
            error = read(proc.stdout)
            assert error["id"] is None and error["error"]["code"] == -32700, error
            note = read(proc.stdout)["params"]["update"]
            assert note["toolCallId"] == "c1" and "status" not in note, note  # still pending
            assert "could not be read" in content_texts(note) and "print(6 * 7)" in content_texts(note)
            result = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
            send(proc, {"jsonrpc": "2.0", "id": asked["id"], "result": result})
            done, more = answer_to(proc, 2)
        finally:
            _stop(proc)
    assert done["result"]["stopReason"] == "end_turn"
    updates = _updates(seen + more)
    assert _ended_once(updates, "c1") == "completed"
    assert "42" in str([u for u in updates if u.get("toolCallId") == "c1"])
