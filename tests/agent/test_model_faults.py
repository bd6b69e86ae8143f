"""Model server faults: the real CLI (``run``) against the fake OpenAI server on 127.0.0.1.

Each fault ends with a clear message, a bounded number of model requests, a valid session file,
and a next prompt that works.
"""

from __future__ import annotations

import json
from pathlib import Path

from freeact_tui.agent.history import INCOMPLETE_MARK
from freeact_tui.store.event_record import EVENT_KEY
from tests.fake_openai import Cut, FakeOpenAI, HttpError, Malformed, RateLimited, Reply, Stall, ToolCallReply
from tests.helpers import cli, fake_args
from tests.scripted import CODE_TOOL


def all_lines(home: Path, session_id: str) -> list[dict]:  # type: ignore[type-arg]
    """The session's stored lines ([] when nothing was kept)."""
    files = list(home.rglob(f"{session_id}/main.jsonl"))
    return [json.loads(line) for f in files for line in f.read_text().splitlines()]


def session_lines(home: Path, session_id: str) -> list[dict]:  # type: ignore[type-arg]
    """The conversation's stored lines, without the event records (the errors the log showed)."""
    return [line for line in all_lines(home, session_id) if not is_event(line)]


def is_event(line: dict) -> bool:  # type: ignore[type-arg]
    return EVENT_KEY in (line["message"].get("metadata") or {})


def run_json(server: FakeOpenAI, cwd: Path, *extra: str, prompt: str = "go") -> tuple[int, dict]:  # type: ignore[type-arg]
    done = cli("run", *fake_args(server), "--output-format", "json", *extra, prompt, cwd=cwd)
    assert done.stdout.strip(), done.stderr
    return done.returncode, json.loads(done.stdout)


def events(server: FakeOpenAI, cwd: Path, prompt: str = "go") -> tuple[int, list[dict]]:  # type: ignore[type-arg]
    done = cli("run", *fake_args(server), "--output-format", "stream-json", prompt, cwd=cwd)
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def test_invalid_json_arguments_forever_stop_after_three_requests(
    fake_openai: FakeOpenAI, tmp_path: Path, isolated_home: Path
) -> None:
    fake_openai.default = Reply(tool_calls=[ToolCallReply(CODE_TOOL, '{"code": "pri')])
    code, result = run_json(fake_openai, tmp_path, "--action-protocol", "tools")  # scripts tool calls
    assert (code, result["status"]) == (4, "stalled")
    assert fake_openai.count == 3  # was: hundreds of requests in a loop
    assert "Invalid JSON arguments" in result["errors"][0]["message"]
    assert "3 steps in a row made no progress" in result["errors"][0]["message"]
    assert "Invalid JSON arguments" in fake_openai.requests[1].tool_results()[-1]
    lines = session_lines(isolated_home, result["session_id"])
    assert [line["message"]["kind"] for line in lines][-2:] == ["response", "request"]  # every call answered
    fake_openai.default = None
    fake_openai.script(Reply("fine now"))
    code, result = run_json(fake_openai, tmp_path, "--resume", prompt="again")
    assert (code, result["answer"]) == (0, "fine now")


def test_a_broken_call_is_repaired_by_the_models_next_try(
    fake_openai: FakeOpenAI, tmp_path: Path, isolated_home: Path
) -> None:
    fake_openai.script(
        Reply(tool_calls=[ToolCallReply("no_such_tool", {"x": 1})]),
        Reply(tool_calls=[ToolCallReply(CODE_TOOL, '{"code": ')]),
        Reply("repaired"),
    )
    code, result = run_json(fake_openai, tmp_path)
    assert (code, result["answer"], fake_openai.count) == (0, "repaired", 3)
    assert "Unknown tool `no_such_tool`" in fake_openai.requests[1].tool_results()[-1]
    assert "Invalid JSON arguments" in fake_openai.requests[2].tool_results()[-1]


def test_a_cut_stream_is_an_error_and_its_text_is_kept_marked_incomplete(
    fake_openai: FakeOpenAI, tmp_path: Path, isolated_home: Path
) -> None:
    for clean in (True, False):
        fake_openai.script(Cut("Partial answ", clean=clean), Reply("complete answer"))
        code, result = run_json(fake_openai, tmp_path)
        assert code == 1, result
        assert "cut off" in result["errors"][0]["message"]
        lines = session_lines(isolated_home, result["session_id"])
        last = lines[-1]["message"]
        assert last["kind"] == "response"
        assert last["parts"][-1]["content"] == "Partial answ" + INCOMPLETE_MARK
        code, result = run_json(fake_openai, tmp_path, "--resume", prompt="go on")
        assert (code, result["answer"]) == (0, "complete answer")
    assert fake_openai.count == 4  # a cut reply was seen by the user: never silently re-asked


def test_transient_errors_are_retried_visibly_and_boundedly(
    fake_openai: FakeOpenAI, tmp_path: Path, isolated_home: Path
) -> None:
    fake_openai.script(HttpError(500), RateLimited(retry_after=1), Reply("after two retries"))
    code, stream = events(fake_openai, tmp_path)
    assert code == 0 and stream[-1]["answer"] == "after two retries"
    retries = [e for e in stream if e["type"] == "model_retry"]
    assert [(e["attempt"], e["attempts"]) for e in retries] == [(1, 2), (2, 2)]
    assert "HTTP 500" in retries[0]["reason"] and "HTTP 429" in retries[1]["reason"]
    assert fake_openai.count == 3  # no hidden client retries on top


def test_persistent_faults_give_a_clear_error_after_a_few_requests(
    fake_openai: FakeOpenAI, tmp_path: Path, isolated_home: Path
) -> None:
    for fault, words in ((HttpError(503), "HTTP 503"), (Malformed(), "")):
        before = fake_openai.count
        fake_openai.default = fault
        code, result = run_json(fake_openai, tmp_path)
        assert code == 1 and result["errors"], result
        assert words in result["errors"][0]["message"]
        assert fake_openai.count - before <= 3
        assert session_lines(isolated_home, result["session_id"]) == []  # rolled back: nothing half-written
        (record,) = all_lines(
            isolated_home, result["session_id"]
        )  # what the user saw: the prompt and the error
        event = record["message"]["metadata"][EVENT_KEY]
        assert event["message"] == result["errors"][0]["message"] and len(event["withdrawn"]) == 1


def test_retry_after_is_honoured_and_a_long_one_ends_the_turn_clearly(
    fake_openai: FakeOpenAI, tmp_path: Path, isolated_home: Path
) -> None:
    fake_openai.script(RateLimited(retry_after=1.5), Reply("after waiting"))
    code, stream = events(fake_openai, tmp_path)
    assert code == 0 and stream[-1]["answer"] == "after waiting"
    retries = [e for e in stream if e["type"] == "model_retry"]
    assert [e["delay"] for e in retries] == [1.5]  # the provider's wait, longer than the first backoff (1 s)
    first, second = fake_openai.requests[0], fake_openai.requests[1]
    assert second.at - first.at >= 1.4

    fake_openai.script(RateLimited(retry_after=600), Reply("never asked"))
    code, result = run_json(fake_openai, tmp_path)
    assert code == 1
    assert "asks to wait 600 s" in result["errors"][0]["message"]
    assert fake_openai.pending == 1  # not re-asked while the provider said to wait


def test_a_stalled_request_is_retried_and_a_stall_mid_reply_keeps_the_text(
    fake_openai: FakeOpenAI, tmp_path: Path, isolated_home: Path
) -> None:
    config = tmp_path / "c.toml"
    config.write_text("model_idle_timeout = 1.0\n")
    fake_openai.script(Stall(30), Reply("after a stall"))
    code, result = run_json(fake_openai, tmp_path, "--config", str(config))
    assert (code, result["answer"], fake_openai.count) == (0, "after a stall", 2)

    fake_openai.script(Stall(30, text_before="Half an ans"), Reply("not asked"))
    code, result = run_json(fake_openai, tmp_path, "--config", str(config))
    assert code == 1
    message = result["errors"][0]["message"]
    assert "sent nothing for 1 s" in message and "cut off" in message
    last = session_lines(isolated_home, result["session_id"])[-1]["message"]
    assert last["parts"][-1]["content"] == "Half an ans" + INCOMPLETE_MARK
    assert fake_openai.pending == 1
