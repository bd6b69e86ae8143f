"""#44 (second attack): the requests of one session are answered as if handled in the order they arrived.

Before: a ``session/set_mode`` sent just before ``session/close`` in one write, while a prompt ran, was
refused as "unknown session": the close did not take its place among the session's requests and overtook
it. Now a close cancels the prompts sent before it (as a cancel does), then waits for its turn like every
change; a request sent after it finds no session (a prompt too: -32602, not ``cancelled``). Generated
interleavings of set_mode, set_config_option, prompt, cancel and close go to the real ``freeact-tui acp``
in ONE write each; every answer is the one the sequential order gives (``sequential`` below).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.acp.test_acp_faults import request, start
from tests.acp.test_acp_hostile_lines import Lines, prompt
from tests.fake_openai import FakeOpenAI, Reply
from tests.helpers import fake_args

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

OPS = st.sampled_from(["mode", "option", "prompt", "cancel", "close"])


def sequential(ops: list[str]) -> list[Any]:
    """What each request of ``ops`` (sent in this order) is answered, handled one after the other: a prompt
    is cancelled by a cancel or close sent after it while the session is open; after a close, every
    request is refused (-32602); a cancel has no answer (``None``)."""
    answers: list[Any] = []
    open_ = True
    for i, op in enumerate(ops):
        if op == "cancel":
            answers.append(None)
        elif not open_:
            answers.append(-32602)
        elif op == "prompt":
            later = ops[i + 1 :]
            stop = next((o for o in later if o in ("cancel", "close")), None)
            answers.append("cancelled" if stop else "end_turn")
        else:
            answers.append("ok")
            open_ = op != "close"
    return answers


@pytest.fixture
def lines(tmp_path: Path, fake_openai: FakeOpenAI) -> Any:
    fake_openai.default = Reply("done")
    config = tmp_path / "acp.toml"
    config.write_text('subagent_pool_size = 0\ncheckpoints = false\naction_protocol = "tools"\n')
    proc = start(*fake_args(fake_openai), "--config", str(config), cwd=tmp_path)
    client = Lines(proc)
    client.cwd = str(tmp_path)  # type: ignore[attr-defined]
    try:
        client.write(json.dumps(request(0, "initialize", {"protocolVersion": 1})))
        client.answers(0)
        yield client
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0


class Ids:
    def __init__(self) -> None:
        self.n = 1000

    def next(self) -> int:
        self.n += 1
        return self.n


def open_session(lines: Any, ids: Ids) -> tuple[str, str]:
    """A new session: its id and its model."""
    i = ids.next()
    lines.write(json.dumps(request(i, "session/new", {"cwd": lines.cwd, "mcpServers": []})))
    result = lines.answers(i)[i]["result"]
    (model,) = [o["currentValue"] for o in result["configOptions"] if o["id"] == "model"]
    return result["sessionId"], model


def line_of(op: str, sid: str, model: str, i: int) -> str:
    if op == "prompt":
        return prompt(sid, i)
    if op == "cancel":
        return json.dumps({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
    if op == "mode":
        return json.dumps(request(i, "session/set_mode", {"sessionId": sid, "modeId": "plan"}))
    if op == "option":
        params = {"sessionId": sid, "configId": "model", "value": model}
        return json.dumps(request(i, "session/set_config_option", params))
    return json.dumps(request(i, "session/close", {"sessionId": sid}))


def outcome(answer: dict[str, Any]) -> Any:
    if "error" in answer:
        return answer["error"]["code"]
    return answer["result"].get("stopReason", "ok")


def run(lines: Any, ids: Ids, ops: list[str]) -> list[Any]:
    sid, model = open_session(lines, ids)
    numbered = [(op, ids.next()) for op in ops]
    lines.write(*(line_of(op, sid, model, i) for op, i in numbered))  # one write
    got = lines.answers(*(i for op, i in numbered if op != "cancel"))
    if "close" not in ops:  # stop its kernel before the next example
        i = ids.next()
        lines.write(json.dumps(request(i, "session/close", {"sessionId": sid})))
        lines.answers(i)
    return [None if op == "cancel" else outcome(got[i]) for op, i in numbered]


def test_a_set_mode_just_before_a_close_in_one_write_is_handled_first(lines: Any) -> None:
    ids = Ids()
    assert run(lines, ids, ["prompt", "mode", "close"]) == ["cancelled", "ok", "ok"]
    assert run(lines, ids, ["mode", "close", "mode", "prompt"]) == ["ok", "ok", -32602, -32602]


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(OPS, min_size=1, max_size=6))
def test_every_interleaving_is_answered_as_in_its_sequential_order(lines: Any, ops: list[str]) -> None:
    ids = getattr(lines, "ids", None) or Ids()
    lines.ids = ids
    assert run(lines, ids, ops) == sequential(ops), ops
