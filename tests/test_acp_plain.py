"""``freeact-tui acp`` spoken to as plain JSON-RPC lines (no SDK on the client side): what an older or
hand-written client sends — ``session/set_model``, a ``session/fork`` and ``session/resume`` — and what it
must get back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fake_openai import FakeOpenAI, Reply
from tests.test_acp_faults import read, request, send, start

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
        args = ["--base-url", server.url, "--model", "fake-model", "--config", str(config)]
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
