"""``freeact-tui acp`` under faults, spoken to line by line: bad JSON, unknown methods, stray output, a
client that goes away mid-turn (the process and its kernels must end)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import psutil
import pytest

from tests.acp_client import ROOT, agent_env
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.helpers import CLI, fake_args

pytestmark = pytest.mark.timeout(180)


def start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, *args, "acp"],
        cwd=cwd,
        env=agent_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def send(proc: subprocess.Popen[str], message: dict[str, Any] | str) -> None:
    assert proc.stdin is not None
    proc.stdin.write((message if isinstance(message, str) else json.dumps(message)) + "\n")
    proc.stdin.flush()


def read(stdout: IO[str] | None) -> dict[str, Any]:
    """The next line of stdout, which must be one JSON-RPC message."""
    assert stdout is not None
    line = stdout.readline()
    assert line, "stdout closed"
    message = json.loads(line)  # anything else on stdout fails here
    assert message["jsonrpc"] == "2.0", message
    return message


def request(id_: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}}


def test_the_guard_sends_prints_and_children_to_stderr() -> None:
    code = (
        "import os\n"
        "from freeact_tui.acp.stdio import guard_stdio\n"
        "_, out = guard_stdio()\n"
        "print('stray print', flush=True)\n"
        "os.system('echo from a child')\n"
        'os.write(out, b\'{"jsonrpc": "2.0"}\\n\')\n'
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, env=agent_env(), cwd=ROOT
    )
    assert done.stdout == '{"jsonrpc": "2.0"}\n'
    assert "stray print" in done.stderr and "from a child" in done.stderr


def test_bad_lines_get_json_rpc_errors_and_closing_stdin_ends_it(tmp_path: Path) -> None:
    proc = start("--model", "test", cwd=tmp_path)
    try:
        send(proc, request(0, "initialize", {"protocolVersion": 1}))
        assert read(proc.stdout)["result"]["agentCapabilities"]["loadSession"] is True
        send(proc, "this is not json")
        assert read(proc.stdout)["error"]["code"] == -32700
        send(proc, "[1, 2, 3]")
        assert read(proc.stdout)["error"]["code"] == -32600
        send(proc, request(1, "no/such_method"))
        reply = read(proc.stdout)
        assert (reply["id"], reply["error"]["code"]) == (1, -32601)
        send(
            proc,
            request(2, "session/prompt", {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}),
        )
        reply = read(proc.stdout)
        assert (reply["id"], reply["error"]["code"]) == (2, -32602)
        assert "session/new" in reply["error"]["message"]
        send(proc, request(3, "session/new", {"cwd": "relative/dir", "mcpServers": []}))
        reply = read(proc.stdout)
        assert reply["error"]["code"] == -32602 and "absolute" in reply["error"]["message"]
        send(
            proc,
            request(4, "session/load", {"cwd": str(tmp_path), "sessionId": "../../etc", "mcpServers": []}),
        )
        assert read(proc.stdout)["error"]["code"] == -32602
        # Still serving after all that.
        send(proc, request(5, "initialize", {"protocolVersion": 1}))
        assert read(proc.stdout)["id"] == 5
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        assert proc.stdout is not None and proc.stdout.read() == ""
        assert proc.stderr is not None and "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.kernel
def test_client_gone_mid_turn_ends_the_process_and_its_kernels(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    code = "import time\nprint('sleeping', flush=True)\ntime.sleep(120)"
    fake_openai.script(
        Reply(tool_calls=[ToolCallReply("ipybox_execute_ipython_cell", {"code": code}, call_id="c1")])
    )
    config = tmp_path / "acp.toml"
    config.write_text("subagent_pool_size = 0\ncheckpoints = false\n")
    proc = start(
        *fake_args(fake_openai), "--config", str(config), "--skip-permissions",
        cwd=tmp_path,
    )  # fmt: skip
    try:
        send(proc, request(0, "initialize", {"protocolVersion": 1}))
        read(proc.stdout)
        send(proc, request(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []}))
        session_id = read(proc.stdout)["result"]["sessionId"]
        send(
            proc,
            request(
                2, "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
            ),
        )
        while True:  # until the kernel runs the action
            message = read(proc.stdout)
            update = message.get("params", {}).get("update", {})
            if len(update.get("content", [])) > 1 and "sleeping" in json.dumps(update["content"][1]):
                break
        children = psutil.Process(proc.pid).children(recursive=True)
        assert children, "no kernel process"
        assert proc.stdin is not None
        proc.stdin.close()  # the client is gone
        started = time.monotonic()
        assert proc.wait(timeout=60) == 0
        ended = time.monotonic() - started
        gone, alive = psutil.wait_procs(children, timeout=15)
        assert alive == [], f"still running: {[p.cmdline() for p in alive]}"
        assert ended < 30, ended
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
