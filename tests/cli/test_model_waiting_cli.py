"""A headless run whose model request sends nothing says so: a line on stderr in text output, a
``model_waiting`` line in ``stream-json`` (the real CLI against the fake server stalling)."""

from __future__ import annotations

import json
from pathlib import Path

from freeact_tui.agent.model_call import WAIT_AFTER
from tests.fake_openai import FakeOpenAI, Reply, Stall
from tests.helpers import cli, fake_args

STALL = WAIT_AFTER + 2.5  # silent past the first notice; then the connection drops and is retried


def test_text_output_says_on_stderr_that_the_model_is_silent(tmp_path: Path, isolated_home: Path) -> None:
    with FakeOpenAI() as server:
        server.script(Stall(STALL), Reply("after the wait"))
        done = cli("run", *fake_args(server), "hello", cwd=tmp_path)
        assert done.returncode == 0 and done.stdout == "after the wait\n", done.stderr
    waits = [line for line in done.stderr.splitlines() if "waiting for the model" in line]
    assert waits and waits[0].startswith(
        f"freeact-tui: waiting for the model: nothing for {int(WAIT_AFTER)} s"
    )
    assert "model_idle_timeout" in waits[0]
    assert len(waits) == 1  # a modest interval: not a line per second


def test_stream_json_has_the_waits_before_the_retry(tmp_path: Path, isolated_home: Path) -> None:
    with FakeOpenAI() as server:
        server.script(Stall(STALL), Reply("after the wait"))
        done = cli("run", *fake_args(server), "-o", "stream-json", "hello", cwd=tmp_path)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert done.returncode == 0 and lines[-1]["answer"] == "after the wait"
    types = [line["type"] for line in lines]
    waits = [line for line in lines if line["type"] == "model_waiting"]
    assert waits and waits[0]["seconds"] >= WAIT_AFTER and waits[0]["agent_id"] == "main"
    assert [w["seconds"] for w in waits] == sorted(w["seconds"] for w in waits)
    assert types.index("model_waiting") < types.index("response_chunk")
    assert "waiting for the model" not in done.stderr
