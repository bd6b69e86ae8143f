"""``freeact-tui acp`` spoken to as plain JSON-RPC lines (no SDK on the client side): what an older or
hand-written client sends — ``session/set_model``, a ``session/fork`` and ``session/resume`` — and what it
must get back."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.acp.test_acp_faults import read, request, send, start
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.helpers import fake_args

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(180)]


def answer_to(proc: Any, id_: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The response to request ``id_`` and the notifications that came before it."""
    seen: list[dict[str, Any]] = []
    while True:
        message = read(proc.stdout)
        if message.get("id") == id_ and "method" not in message:
            return message, seen
        seen.append(message)


def test_an_older_client_sets_the_model_with_set_model(tmp_path: Path) -> None:
    config = tmp_path / "acp.toml"
    config.write_text('subagent_pool_size = 0\ncheckpoints = false\naction_protocol = "tools"\n')
    with FakeOpenAI(models=["fake-model", "other-model"]) as server:
        server.script(Reply("one"), Reply("two"))
        args = [*fake_args(server), "--config", str(config)]
        proc = start(*args, cwd=tmp_path)
        try:
            send(proc, request(0, "initialize", {"protocolVersion": 1}))
            assert answer_to(proc, 0)[0]["result"]["agentCapabilities"]["sessionCapabilities"]["fork"] == {}
            send(proc, request(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []}))
            new = answer_to(proc, 1)[0]["result"]
            sid = new["sessionId"]
            assert new["configOptions"][0]["currentValue"] == "fake-model"
            send(proc, request(2, "session/set_model", {"sessionId": sid, "modelId": "other-model"}))
            assert "error" not in answer_to(proc, 2)[0]
            prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}
            send(proc, request(3, "session/prompt", prompt))
            assert answer_to(proc, 3)[0]["result"]["stopReason"] == "end_turn"
            send(proc, request(4, "session/set_model", {"sessionId": sid, "modelId": "no-such-model"}))
            assert answer_to(proc, 4)[0]["error"]["code"] == -32602
            send(proc, request(5, "session/fork", {"sessionId": sid, "cwd": str(tmp_path), "mcpServers": []}))
            fork = answer_to(proc, 5)[0]["result"]["sessionId"]
            send(
                proc,
                request(6, "session/resume", {"sessionId": fork, "cwd": str(tmp_path), "mcpServers": []}),
            )
            resumed, before = answer_to(proc, 6)
            assert "error" not in resumed
            assert not [
                m
                for m in before
                if m.get("params", {}).get("update", {}).get("sessionUpdate", "").endswith("_chunk")
            ]
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=60)
        assert [r.body.get("model") for r in server.requests if r.method == "POST"] == ["other-model"]


def _updates(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m["params"]["update"] for m in messages if m.get("method") == "session/update"]


class Editor:
    """The client side of a plain-lines editor: files open in ``buffers`` (path → unsaved text) answer
    ``fs/read_text_file``, ``fs/write_text_file`` lands in the buffer (noted in ``writes``), and each
    permission request gets the next of ``choices`` (none left: ``cancelled``), noted in ``asked``."""

    def __init__(self, choices: list[str] | None = None, buffers: dict[str, str] | None = None) -> None:
        self.choices = list(choices or [])
        self.buffers = dict(buffers or {})
        self.asked: list[dict[str, Any]] = []
        self.writes: list[tuple[str, str]] = []

    def result(self, message: dict[str, Any]) -> dict[str, Any] | None:
        params = message["params"]
        if message["method"] == "session/request_permission":
            self.asked.append(params)
            if not self.choices:
                return {"outcome": {"outcome": "cancelled"}}
            return {"outcome": {"outcome": "selected", "optionId": self.choices.pop(0)}}
        if message["method"] == "fs/read_text_file":
            return {"content": self.buffers[params["path"]]}
        if message["method"] == "fs/write_text_file":
            self.writes.append((params["path"], params["content"]))
            self.buffers[params["path"]] = params["content"]
            return None
        raise AssertionError(f"unexpected request {message}")

    def answer(self, proc: Any, id_: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """As ``answer_to``, serving the agent's requests on the way."""
        seen: list[dict[str, Any]] = []
        while True:
            message = read(proc.stdout)
            if "method" in message and "id" in message:
                send(proc, {"jsonrpc": "2.0", "id": message["id"], "result": self.result(message)})
            elif message.get("id") == id_ and "method" not in message:
                return message, seen
            else:
                seen.append(message)


def _stop(proc: Any) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=60)


def test_the_mode_a_client_sets_survives_another_process_a_model_change_and_a_fork(tmp_path: Path) -> None:
    """acpx runs each command in a process of its own (``set-mode plan``, then ``prompt``): the mode is the
    session's, like its model, so it holds wherever and however the session is opened again."""
    config = tmp_path / "acp.toml"
    config.write_text('subagent_pool_size = 0\ncheckpoints = false\naction_protocol = "tools"\n')
    code = ToolCallReply("ipybox_execute_ipython_cell", {"code": "print(6 * 7)"}, call_id="c1")
    with FakeOpenAI(models=["fake-model", "other-model"]) as server:
        server.script(Reply(tool_calls=[code]), Reply("Not run."))
        args = [*fake_args(server), "--config", str(config)]
        first = start(*args, cwd=tmp_path)
        try:
            send(first, request(0, "initialize", {"protocolVersion": 1}))
            answer_to(first, 0)
            send(first, request(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []}))
            new = answer_to(first, 1)[0]["result"]
            sid = new["sessionId"]
            assert "plan" in [m["id"] for m in new["modes"]["availableModes"]]
            send(first, request(2, "session/set_mode", {"sessionId": sid, "modeId": "plan"}))
            answer, before = answer_to(first, 2)
            assert "error" not in answer
            assert {"sessionUpdate": "current_mode_update", "currentModeId": "plan"} in _updates(before)
            model = {"sessionId": sid, "configId": "model", "value": "other-model"}
            send(first, request(3, "session/set_config_option", model))
            assert "error" not in answer_to(first, 3)[0]
        finally:
            _stop(first)
        second = start(*args, cwd=tmp_path)
        editor = Editor()
        try:
            send(second, request(0, "initialize", {"protocolVersion": 1}))
            answer_to(second, 0)
            opened = {"sessionId": sid, "cwd": str(tmp_path), "mcpServers": []}
            send(second, request(1, "session/resume", opened))
            resumed = answer_to(second, 1)[0]["result"]
            assert resumed["modes"]["currentModeId"] == "plan"
            assert resumed["configOptions"][0]["currentValue"] == "other-model"  # set before any prompt
            model = {"sessionId": sid, "configId": "model", "value": "fake-model"}
            send(second, request(2, "session/set_config_option", model))  # the session's agent is made again
            assert "error" not in answer_to(second, 2)[0]
            send(
                second,
                request(3, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}),
            )
            answer, during = editor.answer(second, 3)
            assert answer["result"]["stopReason"] == "end_turn"
            calls = [u for u in _updates(during) if u.get("toolCallId") == "c1"]
            assert calls and calls[-1]["status"] == "failed"  # plan mode: refused, nothing ran
            assert "42" not in json.dumps(calls)
            send(second, request(4, "session/fork", opened))
            assert answer_to(second, 4)[0]["result"]["modes"]["currentModeId"] == "plan"
        finally:
            _stop(second)
    assert editor.asked == []
    assert [r.body.get("model") for r in server.requests if r.method == "POST"][:1] == ["fake-model"]


SESSION_METHODS: dict[str, dict[str, Any]] = {
    "session/prompt": {"prompt": [{"type": "text", "text": "hi"}]},
    "session/close": {},
    "session/set_mode": {"modeId": "ask"},
    "session/set_config_option": {"configId": "model", "value": "demo"},
    "session/set_model": {"modelId": "demo"},
    "session/load": {"mcpServers": []},
    "session/resume": {"mcpServers": []},
    "session/fork": {"mcpServers": []},
}
"""Every client → agent method that names a session, with the rest of its parameters (``cwd`` added)."""


def test_an_unknown_session_is_the_same_error_on_every_method(tmp_path: Path) -> None:
    """Each method that takes a ``sessionId``, given ids no session has (never made, closed, made up of
    anything): -32602 with the id in the message, and the connection goes on."""
    config = tmp_path / "acp.toml"
    config.write_text("subagent_pool_size = 0\ncheckpoints = false\n")
    proc = start("--model", "demo", "--config", str(config), cwd=tmp_path)
    try:
        send(proc, request(0, "initialize", {"protocolVersion": 1}))
        answer_to(proc, 0)
        send(proc, request(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []}))
        closed = answer_to(proc, 1)[0]["result"]["sessionId"]
        send(proc, request(2, "session/close", {"sessionId": closed}))
        assert "error" not in answer_to(proc, 2)[0]
        ids = [str(uuid.uuid4()), "not-a-session", "../" + str(uuid.uuid4()), ""]
        id_ = 10
        for method, params in SESSION_METHODS.items():
            open_methods = method in ("session/load", "session/resume", "session/fork")
            for session_id in ids if open_methods else [*ids, closed]:  # a closed one is still in the store
                id_ += 1
                send(
                    proc, {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}
                )
                send(proc, request(id_, method, {"sessionId": session_id, "cwd": str(tmp_path), **params}))
                answer, before = answer_to(proc, id_)
                assert not [m for m in before if "id" in m and "method" not in m]  # the cancel got no answer
                assert answer.get("error", {}).get("code") == -32602, (method, session_id, answer)
                assert session_id in json.dumps(answer["error"]), (method, answer)
    finally:
        _stop(proc)


def test_an_editor_buffer_never_saved_is_read_and_edited_and_a_failing_call_is_shown(tmp_path: Path) -> None:
    """A file that exists only as the editor's unsaved buffer: the model reads it and edits it through
    ``fs/*`` (the diff asked about is against the buffer, nothing is written to disk); an edit that cannot
    apply fails before anything is asked, and still reaches the client as a ``failed`` tool call."""
    work = tmp_path / "work"
    work.mkdir()
    config = tmp_path / "acp.toml"
    config.write_text('subagent_pool_size = 0\ncheckpoints = false\naction_protocol = "tools"\n')
    path = str(work.resolve() / "draft.md")
    buffer = "# Draft\nbeta (unsaved)\n"
    missing = {"path": "draft.md", "old_text": "no such text", "new_text": "x"}
    edit = {"path": "draft.md", "old_text": "beta (unsaved)", "new_text": "beta, edited"}
    with FakeOpenAI(models=["fake-model"]) as server:
        server.script(
            Reply(tool_calls=[ToolCallReply("filesystem_read_text_file", {"path": "draft.md"}, call_id="r")]),
            Reply(tool_calls=[ToolCallReply("filesystem_edit_text_file", missing, call_id="bad")]),
            Reply(tool_calls=[ToolCallReply("filesystem_edit_text_file", edit, call_id="e")]),
            Reply("edited"),
        )
        proc = start(*fake_args(server), "--config", str(config), cwd=work)
        editor = Editor(["allow_once"] * 3, buffers={path: buffer})
        try:
            fs = {"fs": {"readTextFile": True, "writeTextFile": True}}
            send(proc, request(0, "initialize", {"protocolVersion": 1, "clientCapabilities": fs}))
            answer_to(proc, 0)
            send(proc, request(1, "session/new", {"cwd": str(work), "mcpServers": []}))
            sid = answer_to(proc, 1)[0]["result"]["sessionId"]
            send(
                proc,
                request(2, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}),
            )
            answer, during = editor.answer(proc, 2)
        finally:
            _stop(proc)
        results = [r.tool_results()[-1] for r in server.requests[1:4]]
    assert answer["result"]["stopReason"] == "end_turn"
    assert "beta (unsaved)" in results[0]  # the model read the buffer
    updates = _updates(during)
    bad = [u for u in updates if u.get("toolCallId") == "bad"]
    assert bad and bad[0]["sessionUpdate"] == "tool_call" and bad[-1]["status"] == "failed"
    assert "no such text" in json.dumps(bad) or "not found" in json.dumps(bad).lower()
    assert [a["toolCall"]["toolCallId"] for a in editor.asked if a["toolCall"]["toolCallId"] == "bad"] == []
    asked_edit = next(a for a in editor.asked if a["toolCall"]["toolCallId"] == "e")
    diff = next(c for c in asked_edit["toolCall"]["content"] if c["type"] == "diff")
    assert (diff["oldText"], diff["newText"]) == (buffer, "# Draft\nbeta, edited\n")
    assert editor.writes == [(path, "# Draft\nbeta, edited\n")]
    assert [u["status"] for u in updates if u.get("toolCallId") == "e"][-1] == "completed"
    assert not (
        work / "draft.md"
    ).exists()  # the editor keeps it unsaved; nothing was written behind its back


def _usages(messages: list[dict[str, Any]], sid: str) -> list[dict[str, Any]]:
    return [
        m["params"]["update"]
        for m in messages
        if m.get("method") == "session/update"
        and m["params"]["sessionId"] == sid
        and m["params"]["update"]["sessionUpdate"] == "usage_update"
    ]


def test_the_context_fill_follows_every_change_that_is_no_model_request(tmp_path: Path) -> None:
    """``usage_update`` is sent after each model request, and also whenever else what the client shows
    of the context would go stale: a session opened (new, fork: its history's fill), a command run (one
    may compact), another model chosen (another window). And ``/name`` is a command from the first
    prompt on, even one sent before the announcement of the commands could arrive."""
    config = tmp_path / "acp.toml"
    config.write_text('subagent_pool_size = 0\ncheckpoints = false\naction_protocol = "tools"\n')
    with FakeOpenAI(models=["fake-model", "other-model"]) as server:
        server.script(Reply("The answer is " + "long " * 200 + "."))
        proc = start(*fake_args(server), "--config", str(config), cwd=tmp_path)
        editor = Editor()
        seen: dict[str, list[dict[str, Any]]] = {}
        ask_id = iter(range(10, 100))

        def step(name: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
            id_ = next(ask_id)
            send(proc, request(id_, method, params))
            answer, before = editor.answer(proc, id_)
            seen[name] = before
            return answer

        def command(sid: str) -> dict[str, Any]:
            return {"sessionId": sid, "prompt": [{"type": "text", "text": "/context"}]}

        def posts() -> int:
            return len([r for r in server.requests if r.method == "POST"])

        try:
            send(proc, request(0, "initialize", {"protocolVersion": 1}))
            answer_to(proc, 0)
            sid = step("new", "session/new", {"cwd": str(tmp_path), "mcpServers": []})["result"]["sessionId"]
            while not [u for u in _updates(seen.setdefault("announced", [])) if "availableCommands" in u]:
                seen["announced"].append(read(proc.stdout))
            step("open", "session/prompt", command(sid))
            step("turn", "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]})
            step(
                "model",
                "session/set_config_option",
                {"sessionId": sid, "configId": "model", "value": "other-model"},
            )
            fork = step("fork", "session/fork", {"sessionId": sid, "cwd": str(tmp_path), "mcpServers": []})
            fork_id = fork["result"]["sessionId"]
            before = posts()
            step("forked", "session/prompt", command(fork_id))  # at once, before any announcement is read
            after = posts()
        finally:
            _stop(proc)
    opened = _usages(seen["open"], sid)
    assert len(opened) == 2  # the open's (it follows the commands), then the command's
    assert opened[0]["used"] > 0 and opened[0]["size"] > 0
    turn = _usages(seen["turn"], sid)
    assert turn and turn[-1]["used"] > opened[0]["used"]
    assert _usages(seen["model"], sid)
    assert after == before  # /context was a command: no model request
    assert "Context:" in json.dumps(seen["forked"])
    forked = _usages(seen["forked"], fork_id)
    assert forked and forked[-1]["used"] >= turn[-1]["used"] - 50  # the copied history's fill
