"""What the hostile ACP client of round 9 (atk9a, issue #44) found, against the real ``freeact-tui acp``
over stdio, each by its class:

- F2: a model's file call with a path whose probe raises (a name too long, ``~nosuchuser``) answered the
  prompt -32603 with no ``tool_call``, left the turn running, and ``session/load`` of it failed forever and
  left it half open. Now the call is a ``tool_call`` that ends, the next prompt runs, and the session loads
  (here and in another process) with its call replayed.
- F1: a resource URI ``urlparse`` refuses is -32602 naming the block, never -32603.
- F3: ``session/close`` then ``session/load`` in one write while a turn runs: the load opens the session
  afresh after the close, never the session being closed.
- F4: one session's plan never reaches another session's client, in this process or another.
- Minor: ``session/list`` with ``"cwd": ""`` is refused like every method with a ``cwd``; ``session/cancel``
  sent as a request with bad params is -32602; a load of a session open here in another folder is refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from freeact_tui.project import paths
from tests.acp.test_acp_faults import read, request, send, start
from tests.acp.test_acp_plain import _stop, _updates, answer_to
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

CODE_TOOL = "ipybox_execute_ipython_cell"
LONG = "a" * 300


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "acp.toml"
    path.write_text('subagent_pool_size = 0\ncheckpoints = false\naction_protocol = "tools"\n')
    return path


def _folder(tmp_path: Path, name: str = "work") -> Path:
    work = tmp_path / name
    work.mkdir(exist_ok=True)
    return work


def _args(server: FakeOpenAI, tmp_path: Path, *more: str) -> list[str]:
    return ["--base-url", server.url, "--model", "fake-model", "--config", str(_config(tmp_path)), *more]


def _init(proc: Any) -> None:
    send(proc, request(0, "initialize", {"protocolVersion": 1}))
    answer_to(proc, 0)


def _new(proc: Any, cwd: Path, id_: int = 1) -> str:
    send(proc, request(id_, "session/new", {"cwd": str(cwd), "mcpServers": []}))
    return answer_to(proc, id_)[0]["result"]["sessionId"]


def _prompt(sid: str, text: str = "go") -> dict[str, Any]:
    return {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}


def _open_params(sid: str, cwd: Path) -> dict[str, Any]:
    return {"sessionId": sid, "cwd": str(cwd), "mcpServers": []}


def _calls(updates: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Each tool call's statuses in order (its ``tool_call`` first)."""
    out: dict[str, list[str]] = {}
    for u in updates:
        if u["sessionUpdate"] == "tool_call":
            out.setdefault(u["toolCallId"], []).append("tool_call:" + u.get("status", ""))
        elif u["sessionUpdate"] == "tool_call_update" and u.get("status"):
            out.setdefault(u["toolCallId"], []).append(u["status"])
    return out


def test_file_calls_with_paths_no_probe_can_take_are_tool_calls_and_the_session_loads(tmp_path: Path) -> None:
    work = _folder(tmp_path)
    hostile = {
        "w-abs": ("filesystem_write_text_file", {"path": f"/tmp/{LONG}/x.txt", "content": "x"}),
        "w-rel": ("filesystem_write_text_file", {"path": f"{LONG}.txt", "content": "x"}),
        "w-user": ("filesystem_write_text_file", {"path": f"~nosuchuserxyz/{LONG}", "content": "x"}),
        "e-abs": ("filesystem_edit_text_file", {"path": f"/tmp/{LONG}/x.txt", "old_text": "a", "new_text": "b"}),
        "r-user": ("filesystem_read_text_file", {"path": f"~nosuchuserxyz/{LONG}"}),
    }
    calls = [ToolCallReply(tool, args, call_id=cid) for cid, (tool, args) in hostile.items()]
    with FakeOpenAI() as server:
        server.script(Reply(tool_calls=calls), Reply("done"), Reply("next"))
        args = _args(server, tmp_path, "--skip-permissions")
        proc = start(*args, cwd=work)
        try:
            _init(proc)
            sid = _new(proc, work)
            send(proc, request(2, "session/prompt", _prompt(sid)))
            answer, during = answer_to(proc, 2)
            send(proc, request(3, "session/prompt", _prompt(sid, "again")))  # right after: not "already running"
            again = answer_to(proc, 3)[0]
        finally:
            _stop(proc)
        assert answer.get("result", {}).get("stopReason") == "end_turn", answer
        assert again.get("result", {}).get("stopReason") == "end_turn", again
        live = _calls(_updates(during))
        for cid in hostile:
            statuses = live.get(cid, [])
            assert statuses and statuses[0].startswith("tool_call"), (cid, live)
            assert statuses[-1].removeprefix("tool_call:") in ("completed", "failed"), (cid, statuses)
        # another process loads it: every call replayed, the session open and usable (then closed)
        other = start(*args, cwd=work)
        try:
            _init(other)
            send(other, request(1, "session/load", _open_params(sid, work)))
            loaded, replayed = answer_to(other, 1)
            send(other, request(2, "session/close", {"sessionId": sid}))
            closed = answer_to(other, 2)[0]
        finally:
            _stop(other)
    assert "result" in loaded, loaded
    assert set(hostile) <= set(_calls(_updates(replayed)))
    assert closed.get("result") == {}, closed


def test_a_uri_urlparse_refuses_is_invalid_params_naming_the_block(tmp_path: Path) -> None:
    work = _folder(tmp_path)
    blocks = [
        {"type": "resource_link", "uri": "file://[/etc/passwd", "name": "x"},
        {"type": "resource", "resource": {"uri": "http://[::1", "text": "hello"}},
        {"type": "resource", "resource": {"uri": "file://[x", "blob": "aGk="}},
    ]
    with FakeOpenAI() as server:
        server.script(Reply("fine"))
        proc = start(*_args(server, tmp_path), cwd=work)
        try:
            _init(proc)
            sid = _new(proc, work)
            errors = []
            for n, block in enumerate(blocks, 10):
                params = {"sessionId": sid, "prompt": [{"type": "text", "text": "see"}, block]}
                send(proc, request(n, "session/prompt", params))
                errors.append(answer_to(proc, n)[0].get("error"))
            send(proc, request(20, "session/prompt", _prompt(sid)))  # the session goes on
            after = answer_to(proc, 20)[0]
        finally:
            _stop(proc)
    for error in errors:
        assert error is not None and error["code"] == -32602, error
        assert "prompt block 2" in json.dumps(error), error
    assert after["result"]["stopReason"] == "end_turn"


def test_a_load_sent_right_after_a_close_opens_the_session_afresh(tmp_path: Path) -> None:
    work = _folder(tmp_path)
    code = ToolCallReply(CODE_TOOL, {"code": "print(1)"}, call_id="c1")
    with FakeOpenAI() as server:
        server.script(Reply(tool_calls=[code]), Reply("after"), Reply("after the load"))
        proc = start(*_args(server, tmp_path), cwd=work)
        try:
            _init(proc)
            sid = _new(proc, work)
            send(proc, request(2, "session/prompt", _prompt(sid)))
            while not (message := read(proc.stdout)).get("method") == "session/request_permission":
                pass  # the turn waits for the permission, which is never answered
            close = json.dumps(request(10, "session/close", {"sessionId": sid}))
            load = json.dumps(request(11, "session/load", _open_params(sid, work)))
            send(proc, close + "\n" + load)
            answers: dict[int, dict[str, Any]] = {}
            while len(answers) < 3:
                message = read(proc.stdout)
                if message.get("id") in (2, 10, 11) and "method" not in message:
                    answers[message["id"]] = message
            send(proc, request(12, "session/prompt", _prompt(sid, "after reload")))
            after = answer_to(proc, 12)[0]
        finally:
            _stop(proc)
    assert list(answers) == [2, 10, 11], answers  # the close is done before the load is answered
    assert answers[2]["result"]["stopReason"] == "cancelled"
    assert answers[10]["result"] == {} and "result" in answers[11], answers
    assert after.get("result", {}).get("stopReason") == "end_turn", after  # the loaded session is open


def _plan_code(plan: Path, step: str) -> ToolCallReply:
    code = f"from pathlib import Path\nPath({str(plan)!r}).write_text('- [ ] {step}\\n')\nprint('saved')"
    return ToolCallReply(CODE_TOOL, {"code": code}, call_id=f"plan-{step}")


def test_a_plan_reaches_only_the_session_that_wrote_it_here_and_in_another_process(tmp_path: Path) -> None:
    first_dir, second_dir = _folder(tmp_path, "f1"), _folder(tmp_path, "f2")
    plan = paths.data_dir() / "plans" / "b-task.md"  # outside a project: the folder every session shares
    plan.parent.mkdir(parents=True, exist_ok=True)
    other = ToolCallReply(CODE_TOOL, {"code": "print(1)"}, call_id="c-other")
    with FakeOpenAI() as server:
        server.script(
            Reply(tool_calls=[_plan_code(plan, "SECRET_STEP_OF_B")]), Reply("planned"),  # S2 (process A)
            Reply(tool_calls=[other]), Reply("one"),  # S1 (process A), after S2 wrote its plan
            Reply(tool_calls=[_plan_code(plan, "SECOND_SECRET")]), Reply("planned again"),  # S2 again
            Reply(tool_calls=[other]), Reply("one"),  # S3 (process B)
        )  # fmt: skip
        args = _args(server, tmp_path, "--skip-permissions")
        a = start(*args, cwd=first_dir)
        b = start(*args, cwd=second_dir)
        try:
            _init(a)
            _init(b)
            s1, s2 = _new(a, first_dir, 1), _new(a, second_dir, 2)
            s3 = _new(b, first_dir, 1)
            send(a, request(3, "session/prompt", _prompt(s2, "plan it")))
            _, of_s2 = answer_to(a, 3)
            send(a, request(4, "session/prompt", _prompt(s1, "print one")))
            _, of_s1 = answer_to(a, 4)
            send(a, request(5, "session/prompt", _prompt(s2, "plan again")))
            _, of_s2_again = answer_to(a, 5)
            send(b, request(2, "session/prompt", _prompt(s3, "print one")))
            _, of_s3 = answer_to(b, 2)
        finally:
            _stop(a)
            _stop(b)

    def plans(messages: list[dict[str, Any]], sid: str) -> list[str]:
        return [
            json.dumps(m["params"]["update"])
            for m in messages
            if m.get("method") == "session/update"
            and m["params"]["sessionId"] == sid
            and m["params"]["update"]["sessionUpdate"] == "plan"
        ]

    assert len(plans(of_s2, s2)) == 1 and "SECRET_STEP_OF_B" in plans(of_s2, s2)[0]
    assert len(plans(of_s2_again, s2)) == 1 and "SECOND_SECRET" in plans(of_s2_again, s2)[0]
    everything = [*of_s1, *of_s2, *of_s2_again]
    assert plans(everything, s1) == []
    assert plans(of_s3, s3) == []


def test_minor_refusals_a_list_with_an_empty_cwd_a_cancel_request_and_a_load_in_another_folder(
    tmp_path: Path,
) -> None:
    work, elsewhere = _folder(tmp_path), _folder(tmp_path, "elsewhere")
    with FakeOpenAI() as server:
        server.script(Reply("hi"), Reply("still here"))
        proc = start(*_args(server, tmp_path), cwd=work)
        try:
            _init(proc)
            sid = _new(proc, work)
            send(proc, request(2, "session/prompt", _prompt(sid)))
            answer_to(proc, 2)
            send(proc, request(3, "session/list", {"cwd": ""}))
            listed = answer_to(proc, 3)[0]
            send(proc, request(4, "session/cancel", {"sessionId": 5}))
            bad_cancel = answer_to(proc, 4)[0]
            send(proc, {"jsonrpc": "2.0", "id": 5, "method": "session/cancel"})
            no_params = answer_to(proc, 5)[0]
            send(proc, request(6, "session/cancel", {"sessionId": sid}))
            good_cancel = answer_to(proc, 6)[0]
            send(proc, request(7, "session/load", _open_params(sid, elsewhere)))
            moved = answer_to(proc, 7)[0]
            send(proc, request(8, "session/resume", _open_params(sid, elsewhere)))
            moved_resume = answer_to(proc, 8)[0]
            send(proc, request(9, "session/prompt", _prompt(sid, "again")))
            after = answer_to(proc, 9)[0]
        finally:
            _stop(proc)
    assert listed["error"]["code"] == -32602, listed
    assert bad_cancel["error"]["code"] == -32602 and no_params["error"]["code"] == -32602
    assert good_cancel["result"] == {}
    for refused in (moved, moved_resume):
        assert refused["error"]["code"] == -32602, refused
        assert str(work) in refused["error"]["message"] or str(work) in json.dumps(refused["error"])
    assert after["result"]["stopReason"] == "end_turn"  # still open in its own folder
