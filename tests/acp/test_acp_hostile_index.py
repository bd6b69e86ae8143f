"""ACP ``session/list`` with a FIFO as the sessions index answers, and lists the real session (issue #39, F4).

A FIFO at the store's ``.index.json`` made ``session/list`` never answer (and the server ignored SIGTERM,
blocked in the read). The store's files are read by the one checked reader now: a FIFO is no regular file,
the index is rebuilt from the sessions, and the answer comes at once.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from freeact_tui.store.envelope import encode_envelope, utc_now_ts
from freeact_tui.store.index import refresh_meta, write_meta
from tests.acp.test_acp_attacker import _config, _work
from tests.acp.test_acp_faults import request, send, start
from tests.acp.test_acp_plain import _stop, answer_to

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(90)]


def test_session_list_answers_with_a_fifo_as_the_index(tmp_path: Path) -> None:
    store = Path(os.environ["FREEACT_TUI_HOME"]) / "data" / "sessions"
    session_id = str(uuid.uuid4())
    (store / session_id).mkdir(parents=True)
    prompt = {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "the stored task"}]}
    answer = {"kind": "response", "parts": [{"part_kind": "text", "content": "done"}]}
    (store / session_id / "main.jsonl").write_bytes(encode_envelope(prompt, utc_now_ts()) + encode_envelope(answer, utc_now_ts()))
    work = _work(tmp_path)
    meta = refresh_meta(store / session_id)
    meta.cwd = str(work.resolve())  # a session is listed under the folder it was started in
    write_meta(store / session_id, meta)
    os.mkfifo(store / ".index.json")
    proc = start("--model", "demo", "--config", str(_config(tmp_path)), cwd=work)
    try:
        send(proc, request(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}}))
        answer_to(proc, 0)
        send(proc, request(1, "session/list", {}))
        listed, _ = answer_to(proc, 1)  # never came before
    finally:
        _stop(proc)
    ids = [s["sessionId"] for s in listed["result"]["sessions"]]
    assert session_id in ids, listed
