"""#44 (third attack, F4 and F5): the requests sent right after a ``session/load`` (before its answer) wait for
the load and run in arrival order, and nothing of a session is sent after it was closed.

Before: a ``set_mode`` or ``prompt`` sent right after a load was refused "unknown session" (the mode was lost
although the load succeeded), and the delayed announcement of a loaded session (``available_commands_update``,
``usage_update``) went out after its ``session/close``. Now every request for a session being opened waits for
that open (``_after_open``), and every task a session starts is the session's, cancelled at its close."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from freeact_tui.acp.session import AUTO_MODE
from tests.acp.test_acp_attacker import _config, _open, _prompt, _work
from tests.acp.test_acp_faults import read, request, send, start
from tests.acp.test_acp_plain import _stop, answer_to
from tests.fake_openai import FakeOpenAI, Reply

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]


def _load(sid: str, work: Path) -> dict[str, Any]:
    return {"sessionId": sid, "cwd": str(work), "mcpServers": []}


def _answers(proc: Any, ids: set[int]) -> tuple[dict[int, dict[str, Any]], list[tuple[int, dict[str, Any]]]]:
    """The answers to ``ids`` and every message, each with the number of answers read before it."""
    answers: dict[int, dict[str, Any]] = {}
    seen: list[tuple[int, dict[str, Any]]] = []
    while set(answers) != ids:
        message = read(proc.stdout)
        seen.append((len(answers), message))
        if "method" not in message and message.get("id") in ids:
            answers[message["id"]] = message
    return answers, seen


def _stored_mode(sid: str) -> Any:
    (path,) = Path(os.environ["FREEACT_TUI_HOME"]).rglob(f"{sid}/meta.json")
    return json.loads(path.read_text()).get("approval_mode")


def test_requests_pipelined_after_a_load_wait_for_it_and_nothing_follows_a_close(tmp_path: Path) -> None:
    work = _work(tmp_path)
    with FakeOpenAI() as server:
        server.script(Reply("first"), Reply("second"))
        proc = start(
            "--base-url", server.url, "--model", "fake-model", "--config", str(_config(tmp_path)), cwd=work
        )
        try:
            sid = _open(proc, work)
            send(proc, request(2, "session/prompt", _prompt(sid, "one")))
            answer_to(proc, 2)
            send(proc, request(3, "session/close", {"sessionId": sid}))
            answer_to(proc, 3)
            for message in (
                request(4, "session/load", _load(sid, work)),
                request(5, "session/set_mode", {"sessionId": sid, "modeId": AUTO_MODE}),
                request(6, "session/prompt", _prompt(sid, "two")),
            ):
                send(proc, message)
            first, _ = _answers(proc, {4, 5, 6})
            for message in (
                request(7, "session/load", _load(sid, work)),
                request(8, "session/close", {"sessionId": sid}),
                request(9, "session/prompt", _prompt(sid, "three")),
            ):
                send(proc, message)
            second, seen = _answers(proc, {7, 8, 9})
            time.sleep(1)  # an announcement left running would come now
            send(proc, request(10, "session/list", {"cwd": str(work)}))
            _, after = answer_to(proc, 10)
        finally:
            _stop(proc)
    assert [("result" in first[i], "error" in first[i]) for i in (4, 5, 6)] == [(True, False)] * 3, first
    assert first[6]["result"]["stopReason"] == "end_turn"
    assert _stored_mode(sid) == AUTO_MODE
    assert "result" in second[7] and "result" in second[8], second
    assert second[9]["error"]["code"] == -32602 and "no session" in second[9]["error"]["message"], second[9]
    closed_at = next(n for n, m in seen if m.get("id") == 8 and "method" not in m)
    late = [m for n, m in seen if n >= closed_at and m.get("method") == "session/update"] + after
    assert late == [], late
