"""#40's class: how a reply ended (its finish reason) is never lost between the model call and the
front ends. A reply cut at the token limit (``length``) or stopped by the provider's content filter
(``content_filter``) is never reported as a complete answer: headless ``cut`` (exit 5) / ``filtered``
(exit 6), ACP ``max_tokens`` / ``refusal`` (``test_acp_turn_end.py``), a notice in the TUI, all read
from one table (``agent/reply_stops.py``).

The real CLI against the fake OpenAI-compatible server (its finish reason scripted), in every action
protocol; then the table and the "last reply decides" rule over generated event sequences.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import get_args

import pytest
from acp.schema import StopReason
from hypothesis import given
from hypothesis import strategies as st

from freeact_tui.agent.reply_stops import REPLY_STOPS, LastReply
from freeact_tui.cli.run import EXIT_CODES, RunRecord
from freeact_tui.events import (
    AgentEvent,
    CodeExecutionOutput,
    ReplyStopped,
    Response,
    ToolOutput,
)
from tests.fake_openai import FakeOpenAI, Reply, ToolCallReply
from tests.helpers import cli, fake_args
from tests.scripted import CODE_TOOL

DOCS = Path(__file__).resolve().parents[2] / "docs"
PROTOCOLS = [(), ("--action-protocol", "tools"), ("--action-protocol", "text")]


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=["default", "tools", "text"])
@pytest.mark.parametrize(
    ("finish", "status", "code"), [("length", "cut", 5), ("content_filter", "filtered", 6)]
)
def test_a_reply_cut_short_is_not_answered_headless(
    fake_openai: FakeOpenAI, tmp_path: Path, protocol: tuple[str, ...], finish: str, status: str, code: int
) -> None:
    fake_openai.script(Reply("The answer is", finish_reason=finish))
    done = cli("run", *fake_args(fake_openai), *protocol, "-o", "json", "what is it?", cwd=tmp_path)
    result = json.loads(done.stdout)
    assert (done.returncode, result["status"], result["exit_code"]) == (code, status, code), done.stderr
    assert result["answer"] == "The answer is"
    assert fake_openai.count == 1  # the cut reply ends the turn: no request is spent on it
    # why is in ``errors`` too, not on stderr only (model10 F4: it was ``errors: []``), and said once
    assert result["errors"] == [{"kind": status, "message": REPLY_STOPS[finish].notice}]
    assert done.stderr.count(REPLY_STOPS[finish].notice) == 1, done.stderr


def test_run_help_lists_every_exit_code_from_the_one_table(tmp_path: Path) -> None:
    """``run --help`` is derived from ``EXIT_CODES`` (it lacked 5 cut and 6 filtered)."""
    from freeact_tui.cli.run import EXIT_CODES

    shown = " ".join(cli("run", "--help", cwd=tmp_path).stdout.split())
    for status, code in EXIT_CODES.items():
        assert f"{code} {status}:" in shown, (status, shown)


@pytest.mark.parametrize(("finish", "code"), [("length", 5), ("content_filter", 6)])
def test_text_output_prints_the_reply_as_far_as_it_went_and_says_why_on_stderr(
    fake_openai: FakeOpenAI, tmp_path: Path, finish: str, code: int
) -> None:
    fake_openai.script(Reply("The answer is", finish_reason=finish))
    done = cli("run", *fake_args(fake_openai), "what is it?", cwd=tmp_path)
    assert done.returncode == code
    assert done.stdout == "The answer is\n"
    assert f"freeact-tui: {REPLY_STOPS[finish].notice}" in done.stderr.splitlines()


CUT_ARGUMENTS = ['{"code": "import pandas as pd\\ndf = pd.DataFrame(', {"code": "print(6 * 7)"}]


@pytest.mark.kernel
@pytest.mark.parametrize("protocol", PROTOCOLS[:2], ids=["default", "tools"])
@pytest.mark.parametrize("arguments", CUT_ARGUMENTS, ids=["partial-json", "whole-json"])
def test_a_tool_call_cut_by_the_token_limit_is_cut_not_a_broken_call(
    fake_openai: FakeOpenAI, tmp_path: Path, protocol: tuple[str, ...], arguments: str | dict[str, str]
) -> None:
    """The stop reason is read before the reply's parts (#40, a tester): a call cut mid-arguments was
    "Invalid JSON arguments… use a better model", exit 4, and ``auto`` switched to text. Nothing of a cut
    reply runs; the turn ends ``cut``; the model is told next time that it ran out of tokens."""
    cut_call = Reply(tool_calls=[ToolCallReply(CODE_TOOL, arguments, pieces=2)], finish_reason="length")
    fake_openai.script(cut_call, Reply("OK."))
    args = (*fake_args(fake_openai), *protocol, "--allow", "code:*", "-o", "json")
    done = cli("run", *args, "compute", cwd=tmp_path)
    result = json.loads(done.stdout)
    assert (done.returncode, result["status"]) == (5, "cut"), done.stderr
    assert fake_openai.count == 1  # no request spent on repairing it
    assert (
        "Invalid JSON" not in done.stdout + done.stderr
        and "Switched to text" not in done.stdout + done.stderr
    )
    again = cli("run", *args, "--resume", "go on", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    told = " ".join(fake_openai.requests[1].tool_results())
    assert "token limit" in told and "smaller steps" in told, told


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=["default", "tools", "text"])
def test_a_code_block_cut_by_the_token_limit_does_not_run(
    fake_openai: FakeOpenAI, tmp_path: Path, protocol: tuple[str, ...]
) -> None:
    fake_openai.script(
        Reply("Let me compute.\n```python\nimport math\nprint(math.fac", finish_reason="length")
    )
    done = cli(
        "run", *fake_args(fake_openai), *protocol, "--allow", "code:*", "-o", "json", "go", cwd=tmp_path
    )
    result = json.loads(done.stdout)
    assert (done.returncode, result["status"]) == (5, "cut"), done.stderr
    assert fake_openai.count == 1


def test_every_row_has_its_own_status_exit_code_and_a_valid_acp_stop_reason() -> None:
    statuses = [stop.status for stop in REPLY_STOPS.values()]
    assert len(set(statuses)) == len(statuses)
    assert all(status in EXIT_CODES for status in statuses)
    codes = list(EXIT_CODES.values())
    assert len(set(codes)) == len(codes)  # each status its own exit code
    for stop in REPLY_STOPS.values():
        assert stop.stop_reason in get_args(StopReason)  # a stop reason ACP defines
        assert stop.notice and "\n" not in stop.notice


def test_the_docs_list_every_headless_status_with_its_exit_code() -> None:
    table = (DOCS / "headless.md").read_text()
    for status, code in EXIT_CODES.items():
        assert re.search(rf"^\| {code} \| `{status}` \|", table, re.M), status
    acp = (DOCS / "acp.md").read_text()
    for stop in REPLY_STOPS.values():
        assert f"`{stop.stop_reason}`" in acp


EVENTS = st.one_of(
    st.sampled_from(sorted(REPLY_STOPS)).map(lambda f: ReplyStopped(f, REPLY_STOPS[f].notice)),
    st.sampled_from(["stop", "tool_call", "end_turn", "error"]).map(lambda f: ReplyStopped(f, "?")),
    st.text(max_size=5).map(lambda t: Response("ok " + t)),
    st.just(CodeExecutionOutput("out", corr_id="c")),
    st.just(ToolOutput("out", corr_id="t")),
    st.sampled_from(sorted(REPLY_STOPS)).map(lambda f: ReplyStopped(f, "sub", agent_id="sub-1")),
)


@given(st.lists(EVENTS, max_size=12))
def test_the_turns_last_main_reply_decides_the_status(events: list[AgentEvent]) -> None:
    record = RunRecord("s")
    for event in events:
        record.see(event)
    main = [e for e in events if e.agent_id == "main"]
    last = main[-1] if main else None
    expected = REPLY_STOPS.get(last.finish) if isinstance(last, ReplyStopped) else None
    if expected is not None:
        assert record.status == expected.status
    else:
        assert record.status not in {stop.status for stop in REPLY_STOPS.values()}
    tracked = LastReply()
    for event in events:
        tracked.see(event)
    assert tracked.stop == expected
