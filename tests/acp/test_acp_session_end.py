"""#44 leftovers, end to end: a signal mid-turn ends the sessions as ``session/close`` does.

Before: SIGTERM mid-turn closed the stream first, so the running prompt was never answered and its tool
call stayed open (SIGHUP was not handled at all), and stopping the tool server while a call from code was
in flight logged uvicorn tracebacks. Now a signal runs the one bounded end of every session
(``acp/session_end.py``) while the stream is open: the prompt is answered ``cancelled``, its tool call
ends ``failed``, the kernels are gone, and the log holds no traceback.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import psutil
import pytest

from tests.acp.test_acp_attacker import CODE_TOOL, _ended_once, _open, _prompt, _work
from tests.acp.test_acp_faults import read, request, send, start
from tests.acp.test_acp_plain import _updates
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]

SERVERS = Path(__file__).resolve().parents[1] / "mcp_servers"
DEAF = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('running', flush=True)\ntime.sleep(600)"
"""Kernel code that ignores the interrupt a cancel sends."""
TOOL = "from mcptools.stuck import wait_forever as w\nprint('running', flush=True)\nprint(w.run(w.Params()))"
"""Code whose MCP tool never returns (a call in flight in the tool server)."""


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "acp.toml"
    path.write_text(
        'subagent_pool_size = 0\ncheckpoints = false\naction_protocol = "tools"\n'
        f'[mcp_servers.stuck]\ncommand = "{sys.executable}"\nargs = ["{SERVERS / "stuck.py"}"]\n'
    )
    return path


@pytest.mark.parametrize(
    ("code", "sig"),
    [(DEAF, signal.SIGTERM), (TOOL, signal.SIGTERM), (DEAF, signal.SIGHUP)],
    ids=["deaf-kernel-term", "mcp-tool-term", "deaf-kernel-hup"],
)
def test_a_signal_mid_turn_answers_the_prompt_and_ends_its_tool_call(
    tmp_path: Path, code: str, sig: signal.Signals
) -> None:
    work = _work(tmp_path)
    with FakeOpenAI() as server:
        server.script(Reply(tool_calls=[ToolCallReply(CODE_TOOL, {"code": code}, call_id="c1")]))
        proc = start(
            "--base-url", server.url, "--model", "fake-model", "--config", str(_config(tmp_path)),
            "--skip-permissions", cwd=work,
        )  # fmt: skip
        try:
            sid = _open(proc, work)
            send(proc, request(2, "session/prompt", _prompt(sid)))
            seen = []
            while "running" not in str(seen[-1:]):  # the code runs in the kernel
                seen.append(read(proc.stdout))
            children = psutil.Process(proc.pid).children(recursive=True)
            proc.send_signal(sig)
            assert proc.stdout is not None
            rest = proc.stdout.read()  # everything it says before it exits
            assert proc.wait(timeout=60) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    messages = seen + [json.loads(line) for line in rest.splitlines()]
    answers = [m for m in messages if m.get("id") == 2]
    assert [a.get("result") for a in answers] == [{"stopReason": "cancelled"}], answers
    updates = _updates(messages)
    assert _ended_once(updates, "c1") == "failed"
    last_update = max(i for i, m in enumerate(messages) if m.get("method") == "session/update")
    assert messages.index(answers[0]) > last_update  # the answer comes after the call's end
    gone, alive = psutil.wait_procs(children, timeout=15)
    assert alive == [], [p.cmdline() for p in alive]
    log = "".join(p.read_text() for p in Path(os.environ["FREEACT_TUI_HOME"]).rglob("freeact-tui.log"))
    assert "Traceback" not in log, log[-3000:]
    assert log.count("uvicorn") <= 1, log[-3000:]
