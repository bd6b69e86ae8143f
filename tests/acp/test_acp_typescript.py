"""A client written with the TypeScript SDK (``@agentclientprotocol/sdk``, run with node) against
``freeact-tui acp``. Opt-in: set ``FREEACT_TUI_ACP_TS=1`` (it installs the SDK from the npm registry
into a temporary directory)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.acp_client import agent_env
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.helpers import CLI, fake_args

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.timeout(400),
    pytest.mark.skipif(not os.environ.get("FREEACT_TUI_ACP_TS"), reason="opt-in: set FREEACT_TUI_ACP_TS=1"),
    pytest.mark.skipif(
        shutil.which("node") is None or shutil.which("npm") is None, reason="needs node and npm"
    ),
]

SDK = "@agentclientprotocol/sdk@2"
CLIENT = Path(__file__).parents[1] / "acp_ts" / "client.mjs"
SESSIONS_CLIENT = Path(__file__).parents[1] / "acp_ts" / "sessions.mjs"


def _node_client(tmp_path: Path, script: Path) -> Path:
    """``script`` in a folder with the SDK installed from the npm registry (``FREEACT_TUI_ACP_TS_NODE``: a
    folder that has it already)."""
    given = os.environ.get("FREEACT_TUI_ACP_TS_NODE")
    node_dir = Path(given) if given else tmp_path / "node"
    if not given:
        node_dir.mkdir()
        (node_dir / "package.json").write_text('{"name": "acp-ts-test", "private": true, "type": "module"}')
        subprocess.run(["npm", "install", "--silent", SDK], cwd=node_dir, check=True, timeout=300)
    shutil.copy(script, node_dir / script.name)
    return node_dir / script.name


def test_typescript_sdk_client_runs_a_turn(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    client = _node_client(tmp_path, CLIENT)
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
    agent = [*CLI, *fake_args(fake_openai),
             "--config", str(config), "acp"]  # fmt: skip
    done = subprocess.run(
        ["node", str(client), *agent],
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
    turn = [k for k in kinds if k not in ("available_commands_update", "usage_update")]
    assert turn[0] == "tool_call" and "agent_message_chunk" in kinds
    final = [u for u in out["updates"] if u.get("toolCallId") == "c1" and u.get("status") == "completed"]
    assert final and "42" in json.dumps(final[-1]["content"])
    text = "".join(
        u["content"]["text"] for u in out["updates"] if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert text == "It is 42."


def test_typescript_sdk_client_uses_the_session_features(tmp_path: Path) -> None:
    client = _node_client(tmp_path, SESSIONS_CLIENT)
    work = tmp_path / "work"
    work.mkdir()
    config = tmp_path / "acp.toml"
    config.write_text('subagent_pool_size = 0\ncheckpoints = false\naction_protocol = "tools"\n')
    with FakeOpenAI(models=["fake-model", "other-model"]) as server:
        server.script(Reply("one"), Reply("two"))
        agent = [*CLI, *fake_args(server),
                 "--config", str(config), "acp"]  # fmt: skip
        done = subprocess.run(
            ["node", str(client), *agent],
            cwd=work,
            env=agent_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        models = [r.body.get("model") for r in server.requests if r.method == "POST"]
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["init"]["agentCapabilities"]["sessionCapabilities"] == {
        "list": {},
        "close": {},
        "resume": {},
        "fork": {},
    }
    assert out["session"]["configOptions"][0]["id"] == "model"
    assert out["set"]["configOptions"][0]["currentValue"] == "other-model"
    assert out["stopReasons"] == ["end_turn", "end_turn"] and out["command"] == "end_turn"
    assert models == ["other-model", "other-model"]
    assert "error" not in out["resumed"] and out["forkId"] != out["session"]["sessionId"]
    assert "error" not in out["mode"] and out["forkMode"] == "plan"
    assert out["resumed"]["value"]["modes"]["currentModeId"] == "plan"
    assert {"sessionUpdate": "current_mode_update", "currentModeId": "plan"} in [
        {k: u[k] for k in ("sessionUpdate", "currentModeId") if k in u} for u in out["updates"]
    ]
    assert out["unknown"]["error"]["code"] == -32602 and "error" not in out["closed"]
    kinds = {u["sessionUpdate"] for u in out["updates"]}
    assert {"available_commands_update", "usage_update", "config_option_update"} <= kinds
    assert out["exitCode"] == 0
    assert "rror" not in done.stderr.replace("logs in", "")  # the SDK's schema checks logged nothing
