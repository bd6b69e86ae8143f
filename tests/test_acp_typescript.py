"""A client written with the TypeScript SDK (``@agentclientprotocol/sdk``, run with node) against
``freeact-tui acp``. Opt-in: set ``FREEACT_TUI_ACP_TS=1`` (it installs the SDK from the npm registry
into a temporary directory)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.acp_client import agent_env
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.timeout(400),
    pytest.mark.skipif(not os.environ.get("FREEACT_TUI_ACP_TS"), reason="opt-in: set FREEACT_TUI_ACP_TS=1"),
    pytest.mark.skipif(
        shutil.which("node") is None or shutil.which("npm") is None, reason="needs node and npm"
    ),
]

SDK = "@agentclientprotocol/sdk@2"
CLIENT = Path(__file__).parent / "acp_ts" / "client.mjs"


def test_typescript_sdk_client_runs_a_turn(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    node_dir = tmp_path / "node"
    node_dir.mkdir()
    (node_dir / "package.json").write_text('{"name": "acp-ts-test", "private": true, "type": "module"}')
    subprocess.run(["npm", "install", "--silent", SDK], cwd=node_dir, check=True, timeout=300)
    shutil.copy(CLIENT, node_dir / "client.mjs")
    work = tmp_path / "work"
    work.mkdir()
    config = tmp_path / "acp.toml"
    config.write_text("subagent_pool_size = 0\ncheckpoints = false\n")
    fake_openai.script(
        Reply(
            tool_calls=[ToolCallReply("ipybox_execute_ipython_cell", {"code": "print(6 * 7)"}, call_id="c1")]
        ),
        Reply("It is 42."),
    )
    agent = [sys.executable, "-m", "freeact_tui", "--base-url", fake_openai.url, "--model", "fake-model",
             "--config", str(config), "acp"]  # fmt: skip
    done = subprocess.run(
        ["node", str(node_dir / "client.mjs"), *agent],
        cwd=work, env=agent_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["init"]["agentCapabilities"]["loadSession"] is True
    assert out["stopReason"] == "end_turn" and out["exitCode"] == 0
    assert out["asked"] == [
        {"toolCallId": "c1", "options": ["allow_once", "allow_always", "reject_once", "reject_always"]}
    ]
    kinds = [u["sessionUpdate"] for u in out["updates"]]
    assert kinds[0] == "tool_call" and "agent_message_chunk" in kinds
    final = [u for u in out["updates"] if u.get("toolCallId") == "c1" and u.get("status") == "completed"]
    assert final and "42" in json.dumps(final[-1]["content"])
    text = "".join(
        u["content"]["text"] for u in out["updates"] if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert text == "It is 42."
