"""``bench/real_model.py`` with peers and kept sessions, and ``bench/approvals_real.py`` on what it kept.

The real bench CLI in a subprocess against the fake OpenAI server (never the local LLM): this app's
agent with a real kernel, smolagents' ``CodeAgent`` when it is installed (it is not a dependency),
freeact when ``FREEACT_PYTHON`` names one, and a peer that is missing — reported, never a crash.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.freeact_peer import find_freeact

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _bench(server: FakeOpenAI, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(BENCH / "real_model.py"), "--base-url", server.url, "--model", "fake",
               "--scratch", str(tmp_path / "scratch"), "--timeout", "240", *args]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=400, cwd=tmp_path)


def _row(stdout: str, agent: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith(f"| derived | {agent} |"))


def test_app_runs_kept_sessions_count_approvals_per_mode_and_a_missing_peer_is_said(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    with FakeOpenAI() as server:
        server.script(
            Reply(tool_calls=[ToolCallReply("ipybox_execute_ipython_cell", {"code": "print(1234 * 5678)"})]),
            Reply("1234 * 5678 = 7006652."),
        )
        done = _bench(server, tmp_path, "--peers", "freeact", "--freeact-python", str(tmp_path / "no-python"),
                      "--tasks", "compute", "--keep-sessions", str(kept))  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "not run with freeact: no freeact Python at" in done.stderr
    # with peers and no --protocols, this app runs with the protocol a --base-url user gets
    assert _row(done.stdout, "default").startswith("| derived | default | 1/1 (100 %) | 1/1 |")
    assert "| compute | derived | 1/1 | - |" in done.stdout

    counted = subprocess.run([sys.executable, str(BENCH / "approvals_real.py"), str(kept), "--json"],
                             capture_output=True, text=True, timeout=120)  # fmt: skip
    assert counted.returncode == 0, counted.stderr[-2000:]
    (row,) = json.loads(counted.stdout)
    assert (row["task"], row["agent"], row["round"], row["cells"]) == ("compute", "default", "1", 1)
    # one computing cell: asked when asking for everything, run unasked in the in-folder mode
    assert row["asked"]["ask"] == 1 and row["asked"]["in-folder"] == 0


def test_unknown_peer_is_one_line() -> None:
    done = subprocess.run([sys.executable, str(BENCH / "real_model.py"), "--base-url", "http://127.0.0.1:9/v1",
                           "--peers", "nope"], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode != 0
    assert done.stderr.strip() == "unknown peers: nope (known: smolagents, freeact)"


@pytest.mark.parametrize("peer", ["smolagents", "freeact"])
def test_a_peer_is_checked_by_the_same_outcome_check(peer: str, tmp_path: Path) -> None:
    extra: list[str] = []
    if peer == "smolagents":
        pytest.importorskip("smolagents", reason="smolagents is not installed (the bench's optional peer)")
        replies = [
            Reply("Thought: compute it.\n```py\nprint(1234 * 5678)\n```"),
            Reply("Thought: done.\n```py\nfinal_answer('It is 7006652.')\n```"),
        ]
    else:
        if not os.environ.get("FREEACT_TUI_PEER_TESTS"):
            # It drives freeact's own SDK (its MCP servers, its kernel) in the freeact venv: it passed on
            # a workstation and failed in CI's fresh venv (the peer solved nothing; not yet understood).
            pytest.skip("the freeact peer is opt-in: set FREEACT_TUI_PEER_TESTS=1 (and FREEACT_PYTHON)")
        python, why = find_freeact()
        if python is None:
            pytest.skip(why)
        extra = ["--freeact-python", python]
        replies = [
            Reply(tool_calls=[ToolCallReply("ipybox_execute_ipython_cell", {"code": "print(1234 * 5678)"})]),
            Reply("It is 7006652."),
        ]
    with FakeOpenAI() as server:
        server.script(*replies)
        done = _bench(
            server,
            tmp_path,
            "--protocols",
            "none",
            "--peers",
            peer,
            "--tasks",
            "compute,cancel",
            "--trace",
            *extra,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"not run with {peer}: cancels a turn: cancel" in done.stderr
    assert _row(done.stdout, peer).startswith(f"| derived | {peer} | 1/1 (100 %) |")
    assert "action: CodeAction(code='print(1234 * 5678)')" in done.stdout  # its code actions, as this app's


def _says_number() -> Callable[[str, str], bool]:
    sys.path.insert(0, str(BENCH))
    from real_model_heldout import says_number

    return says_number


@given(n=st.integers(0, 10**7), zeros=st.integers(0, 2), sep=st.sampled_from(["", ",", ".", " "]))
def test_a_number_is_said_when_equal_by_value_whatever_its_form(n: int, zeros: int, sep: str) -> None:
    """``86400.0`` and ``86,400`` state 86400 (a peer answered ``86400.0`` and was counted wrong);
    a different number never does. (Three zeros after a point read as thousands: ``1.000`` is 1000.)"""
    says = _says_number()
    grouped = f"{n:,}".replace(",", sep) if sep != "." or n >= 1000 else str(n)
    text = f"It is {grouped}{'.' + '0' * zeros if zeros and sep != '.' else ''} seconds."
    assert says(text, str(n))
    assert not says(f"It is {n + 1} seconds.", str(n))
