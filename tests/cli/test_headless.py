"""``freeact-tui run``: the real CLI as a subprocess against the fake OpenAI server on 127.0.0.1."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from freeact_tui.agent.agent import Agent
from freeact_tui.cli.run import STREAM_SCHEMA_VERSION, HeadlessRun, parse_rule, read_prompt, session_rules
from freeact_tui.permissions.rules import PermissionRules
from tests.fake_openai import FakeOpenAI, HttpError, RecordedRequest, Reply, Stall, ToolCallReply
from tests.helpers import CLI, cli, fake_args, session_lines
from tests.scripted import Call, Code, Script, Think, script

CODE_TOOL = "ipybox_execute_ipython_cell"


def code_call(code: str, call_id: str = "call_1") -> Reply:
    return Reply(tool_calls=[ToolCallReply(CODE_TOOL, {"code": code}, call_id=call_id)])


def test_text_answer_with_options_before_and_after_run(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.script(Reply("The answer is 42.", chunk=3), Reply("Second answer."))
    # tools: a --base-url server defaults to auto, whose reply policy would question an unrun "42"
    done = cli(
        "--base-url", fake_openai.url, "run", "--model", "fake-model", "--action-protocol", "tools", "what is 6*7?",
        cwd=tmp_path,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "The answer is 42.\n"), done.stderr
    assert fake_openai.requests[0].last_user_text() == "what is 6*7?"
    assert CODE_TOOL in fake_openai.requests[0].tool_names
    done = cli(
        *fake_args(fake_openai), "--action-protocol", "tools", "run", "again", cwd=tmp_path
    )  # all before `run`
    assert (done.returncode, done.stdout) == (0, "Second answer.\n"), done.stderr
    assert fake_openai.count == 2


def test_prompt_from_stdin_is_appended(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.script(Reply("Looks fine."))
    diff = "--- a/x.py\n+++ b/x.py\n+print('hi')\n"
    done = cli("run", *fake_args(fake_openai), "review this", cwd=tmp_path, stdin=diff)
    assert done.returncode == 0, done.stderr
    assert fake_openai.requests[0].last_user_text() == "review this\n\n" + diff.rstrip("\n")
    done = cli("run", *fake_args(fake_openai), cwd=tmp_path, stdin="")
    assert done.returncode == 1 and "no prompt" in done.stderr
    assert fake_openai.count == 1


@pytest.mark.kernel
def test_allowed_code_runs_in_a_real_kernel_json_output(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    def answer(request: RecordedRequest) -> Reply:
        return Reply(f"The kernel said {request.tool_results()[-1].strip()}.", usage=(30, 7))

    fake_openai.script(code_call("x = 6 * 7\nprint(x)"), answer)
    done = cli("run", *fake_args(fake_openai), "--allow", "code:*", "-o", "json", "compute", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "answered" and result["answer"] == "The kernel said 42."
    assert result["exit_code"] == 0 and result["v"] == STREAM_SCHEMA_VERSION
    (action,) = result["actions"]
    assert action["tool_name"] == CODE_TOOL and action["args"] == {"code": "x = 6 * 7\nprint(x)"}
    assert action["output"].strip() == "42" and action["approvals"][0]["by_rule"] is True
    # usage is counted from the usage chunks the client asked for
    assert all(r.wants_usage for r in fake_openai.requests)
    assert result["usage"] == {"input_tokens": 40, "output_tokens": 12, "requests": 2}
    lines = session_lines(Path(os.environ["FREEACT_TUI_HOME"]), result["session_id"])
    assert lines[-1]["message"]["parts"][0]["content"] == "The kernel said 42."  # stored


def test_refusal_without_a_rule_exits_2_naming_the_pattern(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').close()"
    fake_openai.script(code_call(code))
    done = cli("run", *fake_args(fake_openai), "-o", "json", "do it", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    # the refusal says what the code does, in the dialog's words, and the class that would allow it
    assert "it writes inside this folder: ran" in done.stderr and "nobody is present" in done.stderr
    assert "--allow code:effects:in-folder" in done.stderr
    assert not marker.exists()
    assert fake_openai.count == 1  # the turn ends: no further request after the refusal
    result = json.loads(done.stdout)
    assert result["status"] == "refused" and result["refusals"][0]["allow"] == "code:effects:in-folder"
    # the model is told why (in the stored tool result it sees on the next turn)
    lines = session_lines(Path(os.environ["FREEACT_TUI_HOME"]), result["session_id"])
    returns = [p for line in lines for p in line["message"]["parts"] if p.get("part_kind") == "tool-return"]
    assert "--allow code:effects:in-folder" in returns[-1]["content"]


@pytest.mark.kernel
def test_allow_by_effect_runs_in_folder_code_and_refuses_code_that_writes_outside(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    inside, outside = work / "inside.txt", tmp_path / "outside.txt"
    fake_openai.script(
        code_call("open('inside.txt', 'w').write('x')"),
        code_call("open('../outside.txt', 'w').write('x')"),
        Reply("done"),
    )
    done = cli(
        "run", *fake_args(fake_openai), "--allow", "effects:in-folder", "-o", "json", "do it", cwd=work
    )
    assert inside.exists() and not outside.exists(), done.stderr
    assert done.returncode == 2 and "touches paths outside this folder" in done.stderr


def test_deny_beats_allow(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    fake_openai.script(code_call(f"open({str(marker)!r}, 'w').close()"))
    done = cli(
        "run",
        *fake_args(fake_openai),
        "--allow",
        "*",
        "--deny",
        "code:*",
        "--allow",
        "code:*",
        "go",
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert "denied by the permission rule `code:*`" in done.stderr and "--allow" not in done.stderr
    assert not marker.exists() and fake_openai.count == 1


def test_stream_json_one_event_per_line(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.script(Reply("Streaming works.", chunk=4, usage=(11, 3)))
    done = cli("run", *fake_args(fake_openai), "--output-format", "stream-json", "hi", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert all(e["v"] == STREAM_SCHEMA_VERSION for e in events)
    assert events[0]["type"] == "start" and events[0]["model"] == "fake-model"
    chunks = [e["content"] for e in events if e["type"] == "response_chunk"]
    assert len(chunks) >= 4 and "".join(chunks) == "Streaming works."
    assert [e["content"] for e in events if e["type"] == "response"] == ["Streaming works."]
    usage = [e for e in events if e["type"] == "usage_update"]
    assert usage and usage[-1]["input_tokens"] == 11 and usage[-1]["agent_id"] == "main"
    assert events[-1]["type"] == "result" and events[-1]["answer"] == "Streaming works."
    assert events[-1]["session_id"] == events[0]["session_id"]


def test_max_turns_exits_3(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    # an unknown tool needs no approval and no kernel: its error goes back, and the turn would go on
    fake_openai.script(Reply(tool_calls=[ToolCallReply("no_such_tool", {})]), Reply("never sent"))
    done = cli("run", *fake_args(fake_openai), "--max-turns", "1", "loop", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert "max_turns" in done.stderr and done.stdout == ""
    assert fake_openai.count == 1


def test_resume_continues_the_session(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.script(Reply("Noted: the word is pelican."), Reply("It was pelican."))
    first = json.loads(
        cli("run", *fake_args(fake_openai), "-o", "json", "remember pelican", cwd=tmp_path).stdout
    )
    done = cli("run", *fake_args(fake_openai), "--resume", "-o", "json", "what was the word?", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    second = json.loads(done.stdout)
    assert second["session_id"] == first["session_id"]
    sent = [m.get("content") for m in fake_openai.requests[1].messages if m["role"] in ("user", "assistant")]
    assert sent == ["remember pelican", "Noted: the word is pelican.", "what was the word?"]
    # --session-id with a prefix continues the same session too
    fake_openai.script(Reply("Still pelican."))
    done = cli(
        "run",
        *fake_args(fake_openai),
        "--session-id",
        first["session_id"][:8],
        "-o",
        "json",
        "and?",
        cwd=tmp_path,
    )
    assert json.loads(done.stdout)["session_id"] == first["session_id"]
    assert len(fake_openai.requests[2].messages) > len(fake_openai.requests[1].messages)


def test_model_error_exits_1(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.script(HttpError(400, "bad request (fake)"))
    done = cli("run", *fake_args(fake_openai), "hi", cwd=tmp_path)
    assert done.returncode == 1 and "HTTP 400" in done.stderr and done.stdout == ""
    done = cli("run", "--model", "nope-model", "hi", cwd=tmp_path)
    assert done.returncode == 1 and "provider" in done.stderr and "Traceback" not in done.stderr


def test_a_server_that_cannot_be_reached_is_named_with_the_cause(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    done = cli("run", "--base-url", url, "--model", "local", "-e", "docker", "hi", cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == "", done.stderr
    assert f"Cannot reach the model server at {url}" in done.stderr
    assert "refused" in done.stderr.lower() or "connect call failed" in done.stderr.lower(), done.stderr
    assert ".." not in done.stderr and "Traceback" not in done.stderr


def test_sigint_exits_130(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.script(Stall(text_before="thinking"))
    proc = subprocess.Popen(
        [*CLI, "run", *fake_args(fake_openai), "wait"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while fake_openai.count == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert fake_openai.count == 1
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "interrupted" in err


def test_rule_syntax_and_stdin_reading(tmp_path: Path) -> None:
    assert parse_rule("shell:git status *") == ("shell", "git status *")
    assert parse_rule("*rm -rf*") == ("*", "*rm -rf*")
    assert parse_rule("path:src/**") == ("*", "path:src/**")  # path: is a pattern, not a kind
    assert parse_rule("*:ls *") == ("*", "ls *")
    with pytest.raises(ValueError, match="empty pattern"):
        parse_rule("code:")
    piped = tmp_path / "in.txt"
    piped.write_text("body\n")
    with piped.open() as f:
        assert read_prompt("head", f) == "head\n\nbody"
    with piped.open() as f:
        assert read_prompt(None, f) == "body"


# -- the runner in-process, with scripted models (no subprocess, no kernel) -------------------------


def run_scripted(
    s: Script, tmp_path: Path, output_format: str, **rules: list[str]
) -> tuple[int, list[str], str]:
    permissions = PermissionRules(None, working_dir=tmp_path)
    session_rules(permissions, rules.get("allow", []), rules.get("deny", []))
    agent = Agent(
        s.model(),
        sessions_dir=tmp_path / "s",
        working_dir=tmp_path,
        permissions=permissions,
        eager_kernel=False,
    )
    out, err = io.StringIO(), io.StringIO()
    code = HeadlessRun(agent, "go", output_format, out=out, err=err).run()  # type: ignore[arg-type]
    return code, out.getvalue().splitlines(), err.getvalue()


def test_stream_json_carries_thinking_and_every_line_is_versioned(tmp_path: Path) -> None:
    s = script([Think("Let me think."), "Forty", "-two."])
    code, lines, err = run_scripted(s, tmp_path, "stream-json")
    events = [json.loads(line) for line in lines]
    assert code == 0, err
    types = [e["type"] for e in events]
    assert types[0] == "start" and types[-1] == "result"
    assert (
        "thoughts_chunk" in types
        and {"type": "thoughts", "content": "Let me think."}.items()
        <= next(e for e in events if e["type"] == "thoughts").items()
    )
    assert events[-1]["answer"] == "Forty-two." and all(e["v"] == 1 for e in events)


@pytest.mark.kernel  # the subagent gets a started kernel from its pool before it asks anything
def test_subagent_refusal_is_named_and_exits_2(tmp_path: Path) -> None:
    s = script(
        [Call("subagent_task", {"prompt": "delete the logs"}, call_id="t1")],
        [Code("import shutil; shutil.rmtree('logs')", call_id="sub-c1")],  # the subagent's first request
    )
    code, lines, err = run_scripted(s, tmp_path, "json", allow=["subagent:*"])
    result = json.loads(lines[0])
    assert code == 2 and result["status"] == "refused"
    (refusal,) = result["refusals"]
    # deleting inside the folder: the class that would allow it, not a rule on the code's text
    assert refusal["agent_id"].startswith("sub-") and refusal["allow"] == "code:effects:in-folder"
    assert f'subagent {refusal["agent_id"]}: refused code action "import shutil' in err
