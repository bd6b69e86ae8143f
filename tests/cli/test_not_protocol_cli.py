"""A base URL that does not serve the chat-completions protocol: one clear line, one request, exit 1.

The real CLI (``run``) against the fake server answering with what a misconfigured ``--base-url``
answers — a proxy's login page, a wrong path's 404 page, an empty body, plain text, JSON without
``choices``, an event stream without data or of the wrong JSON — in every output format. Each ends as a
model error (exit code 1, ``docs/headless.md``) whose message names the URL and what came back; none
is retried (the same URL gives the same page) and none ends in an internal error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI, Raw
from tests.helpers import cli, fake_args

CORPUS = {
    "login page": (
        Raw("<!DOCTYPE html><html><title>Sign in</title><body>Log in</body></html>"),
        "an HTML page",
    ),
    "404 page": (
        Raw("<html><body><h1>404 Not Found</h1></body></html>", status=404),
        "HTTP 404 and an HTML page",
    ),
    "empty body": (Raw(b"", "application/json"), "an empty body"),
    "plain text": (Raw("It works!", "text/plain"), "a text/plain body that is not JSON"),
    "json without choices": (
        Raw('{"status": "ok", "models": []}', "application/json"),
        "JSON without `choices`",
    ),
    "stream without data": (Raw(": ping\n\n", "text/event-stream"), "an event stream without any data"),
    "stream that only ends": (
        Raw("data: [DONE]\n\n", "text/event-stream"),
        "an event stream that ended before",
    ),
    "stream of other json": (
        Raw('data: {"type": "ping"}\n\ndata: [DONE]\n\n', "text/event-stream"),
        "an event stream of JSON without `choices`",
    ),
}


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_a_reply_that_is_not_the_protocol_is_named_with_the_url(
    case: str, tmp_path: Path, isolated_home: Path
) -> None:
    reply, says = CORPUS[case]
    with FakeOpenAI(default=reply) as server:
        done = cli("run", *fake_args(server), "--output-format", "json", "hello", cwd=tmp_path)
        result = json.loads(done.stdout)
        assert done.returncode == 1 and result["status"] == "error", done.stderr
        (error,) = result["errors"]
        assert error["kind"] == "model"
        assert error["message"].startswith(f"{server.url} answered with {says}"), error["message"]
        assert "not an OpenAI-compatible reply: is the base URL right?" in error["message"]
        assert done.stderr.strip() == f"freeact-tui: {error['message']}"  # one line, no traceback
        assert server.count == 1  # not retried


def test_the_text_output_says_it_in_one_line_too(tmp_path: Path, isolated_home: Path) -> None:
    with FakeOpenAI(default=CORPUS["login page"][0]) as server:
        done = cli("run", *fake_args(server), "hello", cwd=tmp_path)
        assert done.returncode == 1 and done.stdout == ""
        (line,) = done.stderr.splitlines()
        assert line.startswith(f"freeact-tui: {server.url} answered with an HTML page")
