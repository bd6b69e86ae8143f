"""What an attacker who had not seen the code found driving ``freeact-tui acp`` with plain JSON-RPC lines
(issue #44), each as the attacker saw it, against the real process:

- calls the model broke (invalid JSON arguments, a missing argument, an unknown tool) never reached the
  client: each must be a ``tool_call`` that ends ``failed``;
- a session another process writes (or whose history is damaged) opened with ``session/load`` or
  ``session/resume``, and only its first prompt failed: it must be refused at open, with one code;
- an ``fs/read_text_file`` or a permission request the client never answers held the turn forever;
- a client closing stdin right after opening a session left an ERROR traceback in the log.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from freeact_tui.acp.errors import SESSION_UNUSABLE
from freeact_tui.project import paths
from freeact_tui.store.sessions import SessionStore
from tests.acp.test_acp_faults import read, request, send, start
from tests.acp.test_acp_plain import _stop, _updates, answer_to
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]

CODE_TOOL = "ipybox_execute_ipython_cell"
TERMINAL = ("completed", "failed")


def _config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "acp.toml"
    path.write_text(f'subagent_pool_size = 0\ncheckpoints = false\naction_protocol = "tools"\n{extra}')
    return path


def _work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return work


def _open(proc: Any, cwd: Path, fs: bool = False) -> str:
    capabilities = {"fs": {"readTextFile": True, "writeTextFile": True}} if fs else {}
    send(proc, request(0, "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities}))
    answer_to(proc, 0)
    send(proc, request(1, "session/new", {"cwd": str(cwd), "mcpServers": []}))
    return answer_to(proc, 1)[0]["result"]["sessionId"]


def _prompt(sid: str, text: str = "go") -> dict[str, Any]:
    return {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}


def _ended_once(updates: list[dict[str, Any]], tool_call_id: str) -> str:
    """The one terminal status of a tool call, which must have started with ``tool_call``."""
    mine = [u for u in updates if u.get("toolCallId") == tool_call_id]
    assert mine and mine[0]["sessionUpdate"] == "tool_call", (tool_call_id, updates)
    ends = [u["status"] for u in mine if u.get("status") in TERMINAL]
    assert len(ends) == 1, (tool_call_id, mine)
    return ends[0]


def test_calls_the_model_broke_reach_the_client_as_failed_tool_calls(tmp_path: Path) -> None:
    work = _work(tmp_path)
    broken = [
        ToolCallReply(CODE_TOOL, '{"code": "pri', call_id="bad-json"),
        ToolCallReply(CODE_TOOL, {"source": "print(1)"}, call_id="no-code"),
        ToolCallReply("no_such_tool", {"x": 1}, call_id="unknown"),
    ]
    with FakeOpenAI() as server:
        server.script(Reply(tool_calls=broken), Reply("I will do better."))
        proc = start(
            "--base-url", server.url, "--model", "fake-model", "--config", str(_config(tmp_path)), cwd=work
        )
        try:
            sid = _open(proc, work)
            send(proc, request(2, "session/prompt", _prompt(sid)))
            answer, during = answer_to(proc, 2)
        finally:
            _stop(proc)
    assert answer["result"]["stopReason"] == "end_turn"
    updates = _updates(during)
    for call in broken:
        assert _ended_once(updates, call.call_id) == "failed"
    bad = json.dumps([u for u in updates if u.get("toolCallId") == "bad-json"])
    assert "Invalid JSON arguments" in bad


def _stored(store: SessionStore, cwd: Path) -> Any:
    session = store.new_session()
    session.append([ModelRequest(parts=[UserPromptPart("hi")]), ModelResponse(parts=[TextPart("hello")])])
    session.update_meta(cwd=str(cwd))
    return session


def test_a_session_that_cannot_be_used_is_refused_at_open_with_one_code(tmp_path: Path) -> None:
    """A table: (why it cannot be used) × (load, resume, fork). A fork of a session another process
    writes is a new session of this process and works; nothing else opens. A refused session is not
    open afterwards (a prompt names it unknown), and a fork refused leaves no copy behind."""
    work = _work(tmp_path)
    store = SessionStore(paths.default_sessions_dir())
    locked = _stored(store, work)  # this test's process holds its writer lock: "another process"
    damaged = _stored(store, work)
    damaged.unlock()
    main = damaged.history_path()
    main.write_text("not a line of a history\n" + main.read_text())
    config = _config(tmp_path)
    with FakeOpenAI() as server:
        server.script(Reply("on the fork"))
        args = ["--base-url", server.url, "--model", "fake-model", "--config", str(config)]
        holder = start(*args, cwd=work)  # another acp process with a session opened, never prompted
        proc = start(*args, cwd=work)
        try:
            fresh = _open(holder, work)
            own = _open(proc, work)
            cases = {"locked": locked.id, "damaged": damaged.id, "held, no history yet": fresh}
            refused: dict[tuple[str, str], dict[str, Any]] = {}
            forks: list[str] = []
            id_ = 10
            for why, sid in cases.items():
                for method in ("session/load", "session/resume", "session/fork"):
                    id_ += 1
                    send(proc, request(id_, method, {"sessionId": sid, "cwd": str(work), "mcpServers": []}))
                    answer = answer_to(proc, id_)[0]
                    if "error" in answer:
                        refused[(why, method)] = answer["error"]
                    else:
                        assert method == "session/fork", (why, method, answer)
                        forks.append(answer["result"]["sessionId"])
                id_ += 1
                send(proc, request(id_, "session/prompt", _prompt(sid)))
                assert answer_to(proc, id_)[0]["error"]["code"] == -32602  # not open here: unknown
            assert len(forks) == 2  # of the locked one and of the one held by the other process
            id_ += 1
            send(proc, request(id_, "session/prompt", _prompt(forks[0])))
            assert answer_to(proc, id_)[0]["result"]["stopReason"] == "end_turn"
        finally:
            _stop(proc)
            _stop(holder)
            locked.unlock()
    assert set(refused) == {
        (why, method)
        for why in ("locked", "damaged", "held, no history yet")
        for method in ("session/load", "session/resume")
    } | {("damaged", "session/fork")}
    for (why, _), error in refused.items():
        assert error["code"] == SESSION_UNUSABLE == -32600, error
        assert "cannot be used here" in error["message"]
        assert ("cannot be read" if why == "damaged" else "open in another freeact-tui") in error["message"]
    sessions = {p.name for p in paths.default_sessions_dir().iterdir()}
    assert sessions == {locked.id, damaged.id, fresh, own, *forks}  # the refused fork's copy is gone


class Silent:
    """A client that never answers the agent's requests of ``methods`` (and answers the rest)."""

    def __init__(self, methods: set[str]) -> None:
        self.methods = methods
        self.unanswered: list[str] = []

    def until(self, proc: Any, test: Any) -> list[dict[str, Any]]:
        """Read messages until ``test(message)``; answer what is not silenced."""
        seen: list[dict[str, Any]] = []
        while True:
            message = read(proc.stdout)
            seen.append(message)
            if "method" in message and "id" in message:
                if message["method"] in self.methods:
                    self.unanswered.append(message["method"])
                else:
                    result = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
                    send(proc, {"jsonrpc": "2.0", "id": message["id"], "result": result})
            if test(message):
                return seen


def test_a_file_read_the_client_never_answers_is_interrupted_by_cancel(tmp_path: Path) -> None:
    work = _work(tmp_path)
    (work / "notes.md").write_text("notes\n")
    read_call = ToolCallReply("filesystem_read_text_file", {"path": "notes.md"}, call_id="r")
    with FakeOpenAI() as server:
        server.script(Reply(tool_calls=[read_call]), Reply("done"))
        proc = start(
            "--base-url", server.url, "--model", "fake-model", "--config", str(_config(tmp_path)), cwd=work
        )
        client = Silent({"fs/read_text_file"})
        try:
            sid = _open(proc, work, fs=True)
            send(proc, request(2, "session/prompt", _prompt(sid)))
            before = client.until(proc, lambda m: m.get("method") == "fs/read_text_file")
            send(proc, {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
            cancelled = time.monotonic()
            after = client.until(proc, lambda m: m.get("id") == 2 and "method" not in m)
            waited = time.monotonic() - cancelled
        finally:
            _stop(proc)
    assert client.unanswered == ["fs/read_text_file"]
    assert after[-1]["result"]["stopReason"] == "cancelled"
    assert waited < 10, waited
    assert _ended_once(_updates(before + after), "r") == "failed"


def test_a_permission_request_never_answered_ends_after_its_bound(tmp_path: Path) -> None:
    """The bound is the config's ``approval_timeout`` (here 2 s); unset, ``DECISION_TIMEOUT``."""
    work = _work(tmp_path)
    code = ToolCallReply(CODE_TOOL, {"code": "print(6 * 7)"}, call_id="c1")
    config = _config(tmp_path, "approval_timeout = 2\n")
    with FakeOpenAI() as server:
        server.script(Reply(tool_calls=[code]), Reply("Not run."))
        proc = start("--base-url", server.url, "--model", "fake-model", "--config", str(config), cwd=work)
        client = Silent({"session/request_permission"})
        try:
            sid = _open(proc, work)
            send(proc, request(2, "session/prompt", _prompt(sid)))
            seen = client.until(proc, lambda m: m.get("id") == 2 and "method" not in m)
        finally:
            _stop(proc)
    assert client.unanswered == ["session/request_permission"]
    assert seen[-1]["result"]["stopReason"] == "end_turn"
    updates = _updates(seen)
    assert _ended_once(updates, "c1") == "failed"
    assert "within 2 s" in json.dumps([u for u in updates if u.get("toolCallId") == "c1"])
    assert "42" not in json.dumps(updates)


def test_the_trust_question_never_answered_is_interrupted_by_cancel(tmp_path: Path) -> None:
    """An editor's untrusted folder with project files: the first prompt asks the client whether to trust
    it; a client that never answers and then cancels gets ``cancelled`` at once, and the next prompt asks
    again."""
    work = _work(tmp_path)
    (work / "AGENTS.md").write_text("Project rules.\n")
    with FakeOpenAI() as server:
        server.script(Reply("never reached"))
        proc = start(
            "--base-url", server.url, "--model", "fake-model", "--config", str(_config(tmp_path)), cwd=work
        )
        client = Silent({"session/request_permission"})
        try:
            sid = _open(proc, work)
            send(proc, request(2, "session/prompt", _prompt(sid)))
            asked = client.until(proc, lambda m: m.get("method") == "session/request_permission")
            send(proc, {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
            cancelled = time.monotonic()
            answer = client.until(proc, lambda m: m.get("id") == 2 and "method" not in m)[-1]
            waited = time.monotonic() - cancelled
            posts = [r for r in server.requests if r.method == "POST"]
            send(proc, request(3, "session/prompt", _prompt(sid)))
            again = client.until(proc, lambda m: m.get("method") == "session/request_permission")
        finally:
            _stop(proc)
    assert asked[-1]["params"]["toolCall"]["toolCallId"] == "trust-folder"
    assert answer["result"]["stopReason"] == "cancelled"
    assert waited < 10, waited
    assert again[-1]["params"]["toolCall"]["toolCallId"] == "trust-folder"
    assert posts == []  # nothing ran while it was asked, nor after the cancel


def _log_lines() -> list[str]:
    log = Path(os.environ["FREEACT_TUI_HOME"]) / "data" / "logs" / "freeact-tui.log"
    return log.read_text().splitlines() if log.exists() else []


@pytest.mark.timeout(480)  # six processes one after the other
def test_a_client_that_closes_right_after_opening_is_a_normal_end(tmp_path: Path) -> None:
    """Closing stdin as soon as the answer of ``session/new`` (or ``session/load``) is read, or both pipes
    mid-turn: the process ends 0, and the log has no error and no traceback (info lines only)."""
    work = _work(tmp_path)
    config = _config(tmp_path)
    with FakeOpenAI() as server:
        server.script(Reply("hello"))
        args = ["--base-url", server.url, "--model", "fake-model", "--config", str(config)]
        opened: list[str] = []
        for _ in range(2):
            proc = start(*args, cwd=work)
            opened.append(_open(proc, work))  # the answer read, then at once:
            assert proc.stdin is not None
            proc.stdin.close()
            assert proc.wait(timeout=60) == 0
        proc = start(*args, cwd=work)
        sid = _open(proc, work)
        send(proc, request(2, "session/prompt", _prompt(sid)))
        answer_to(proc, 2)
        _stop(proc)
        proc = start(*args, cwd=work)
        send(proc, request(0, "initialize", {"protocolVersion": 1}))
        answer_to(proc, 0)
        send(proc, request(1, "session/load", {"sessionId": sid, "cwd": str(work), "mcpServers": []}))
        assert "result" in answer_to(proc, 1)[0]
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
        proc = start(*args, cwd=work)  # and a client that dies mid-turn: both its pipes closed
        server.script(Reply("a long answer " * 100, delay=0.01))
        sid = _open(proc, work)
        send(proc, request(2, "session/prompt", _prompt(sid)))
        while "agent_message_chunk" not in json.dumps(read(proc.stdout)):
            pass
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        proc.stdout.close()
        assert proc.wait(timeout=60) == 0
    lines = _log_lines()
    assert not [line for line in lines if " ERROR " in line or "Traceback" in line], "\n".join(lines[-30:])
