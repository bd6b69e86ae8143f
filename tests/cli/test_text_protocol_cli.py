"""``freeact-tui run --action-protocol text``: the real CLI against the fake OpenAI server on 127.0.0.1."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply
from tests.helpers import cli, fake_args, session_lines


@pytest.mark.kernel
def test_headless_cli_in_text_mode_against_the_fake_server(tmp_path: Path) -> None:
    """The real CLI (``freeact-tui run --action-protocol text``) over HTTP, a real kernel, no usage sent."""

    def answer(request: RecordedRequest) -> Reply:
        told = request.last_user_text()
        return Reply(f"The kernel printed {told.split(':', 1)[1].split()[0]}.", usage=None)

    with FakeOpenAI() as server:
        server.script(
            Reply(
                "Computing.\n\n```python\nx = 6 * 7\nprint(x)\n```\n\n```bash\necho shell-$((1 + 1))\n```",
                usage=None,
            ),
            answer,
        )
        done = cli(
            "run",
            *fake_args(server),
            "--action-protocol",
            "text",
            "--allow",
            "code:*",
            "--allow",
            "script:*",
            "-o",
            "json",
            "compute",
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert result["status"] == "answered" and result["answer"] == "The kernel printed 42."
        assert [a["output"].strip() for a in result["actions"]] == ["42", "shell-2"]
        assert [a["args"]["code"] for a in result["actions"]] == [
            "x = 6 * 7\nprint(x)",
            "%%bash\necho shell-$((1 + 1))",
        ]
        assert all(r.wants_usage for r in server.requests)  # usage was asked for ...
        assert not any(r.tool_names for r in server.requests)  # ... and no tool schemas were sent
        usage = result["usage"]  # ... none came: estimated
        assert usage["estimated"] is True and usage["input_tokens"] > 100 and usage["requests"] == 2
        told = server.requests[1].messages[-1]
        assert told["role"] == "user" and "Output of code block 1:\n42" in told["content"]
        lines = session_lines(Path(os.environ["FREEACT_TUI_HOME"]), result["session_id"])
        assert [line["message"]["kind"] for line in lines] == ["request", "response", "request", "response"]
