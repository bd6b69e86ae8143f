"""#44 (third attack, F1): every method that takes a ``cwd`` answers a hostile one with invalid params
(-32602) and a one-line reason, over the real ``freeact-tui acp``. Before: a component over 255 bytes was an
internal error (-32603) with a traceback (``Path.is_dir()`` let ``ENAMETOOLONG`` escape on Python 3.11)."""

from __future__ import annotations

import itertools
import uuid
from pathlib import Path

import pytest

from tests.acp.test_acp_attacker import _config, _work
from tests.acp.test_acp_faults import read, request, send, start
from tests.acp.test_acp_plain import _stop, answer_to

pytestmark = [pytest.mark.timeout(240)]

SID = str(uuid.uuid4())
METHODS = {
    "session/new": lambda cwd: {"cwd": cwd, "mcpServers": []},
    "session/load": lambda cwd: {"cwd": cwd, "sessionId": SID, "mcpServers": []},
    "session/resume": lambda cwd: {"cwd": cwd, "sessionId": SID, "mcpServers": []},
    "session/fork": lambda cwd: {"cwd": cwd, "sessionId": SID, "mcpServers": []},
    "session/list": lambda cwd: {"cwd": cwd},
}


def test_every_method_with_a_cwd_refuses_a_hostile_one_as_invalid_params(tmp_path: Path) -> None:
    work = _work(tmp_path)
    (work / "file").write_text("not a folder")
    hostile = [
        "/" + "a" * 300,
        str(work / ("b" * 256) / "c"),
        "/" + "d/" * 3000,
        "/x\x00y",
        str(work / "file"),
        "relative/dir",
    ]
    proc = start("--model", "test", "--config", str(_config(tmp_path)), cwd=work)
    answers = []
    try:
        send(proc, request(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}}))
        answer_to(proc, 0)
        for n, (method, cwd) in enumerate(itertools.product(METHODS, hostile), start=1):
            send(proc, request(n, method, METHODS[method](cwd)))
            answers.append((method, cwd[:40], answer_to(proc, n)[0]))
    finally:
        _stop(proc)
    wrong = [(m, c, a) for m, c, a in answers if a.get("error", {}).get("code") != -32602]
    assert wrong == [], wrong
    assert all("\n" not in a["error"]["message"] and len(a["error"]["message"]) < 400 for _, _, a in answers)


def test_a_string_id_with_a_lone_surrogate_is_echoed_exactly(tmp_path: Path) -> None:
    """#44 (third attack, F6): the answer names the very id sent (before: ``"\\ufffd"``)."""
    work = _work(tmp_path)
    proc = start("--model", "test", "--config", str(_config(tmp_path)), cwd=work)
    try:
        send(proc, request(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}}))
        answer_to(proc, 0)
        send(proc, '{"jsonrpc":"2.0","id":"\\ud800-x","method":"session/list","params":{}}')
        answer = read(proc.stdout)  # session/list sends nothing before its answer
    finally:
        _stop(proc)
    assert answer["id"] == "\ud800-x" and "result" in answer, answer
