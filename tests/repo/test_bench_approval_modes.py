"""``bench/approval_modes.py --from-sessions DIR`` counts the approvals of a real session store's code
actions per mode (#42, round 3): a store written by a scripted run of the app's agent, read back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.toolcalls import RESET_TOOL
from tests import helpers
from tests.scripted import Call, Code, script

pytestmark = [pytest.mark.kernel]
executor = helpers.kernel
BENCH = Path(__file__).resolve().parents[2] / "bench" / "approval_modes.py"


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.asyncio(loop_scope="module")
async def test_the_bench_counts_the_code_actions_of_a_session_store_per_mode(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script(
        [Code("open('bench-a.txt', 'w').write('1')", call_id="c1")],
        [Code("exec('q = 1')", call_id="c2")],  # the reading cannot follow it: trust ends
        [Call(RESET_TOOL, {}, call_id="r")],  # ... until the kernel is reset
        [Code("print(open('bench-a.txt').read())", call_id="c3")],
        ["done"],
    )
    agent = helpers.make_agent(s, executor, tmp_path, Path(executor.working_dir), enable_subagents=False)
    async with agent:
        await helpers.run(agent, "go")
    done = _bench("--json", "--from-sessions", str(tmp_path / "sessions"))
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert figures["tasks"] == 1 and figures["cells"] == 3
    assert figures["asked_ask"] == 3
    assert figures["asked_in-folder"] == 1  # only the exec; the reset restores trust for the read
    assert figures["asked_ask+s"] == 2  # `s` on the write saves in-folder work; the exec still asks
    assert figures["asked_plan"] == 0


def test_a_folder_without_sessions_is_refused_in_one_line(tmp_path: Path) -> None:
    done = _bench("--from-sessions", str(tmp_path))
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [f"approval_modes: no session history (<id>/main.jsonl) in {tmp_path}"]
