"""#40/#45 leftovers (model9): a failed request is reported by what happened and counted with what it sent.

The real CLI (``run --output-format json``) against the fake OpenAI-compatible server:
- an error event inside a stream that opened with 200 was labelled "HTTP 500" (pydantic-ai gives it the
  status the same error has before a stream opens): it is now "the server's stream reported an error",
  whether nothing or part of a reply came before it (``model_call.describe_model_error``, the one label);
- a request that failed counted 0 input tokens: what it sent is estimated (``usage.SentRequests.unanswered``
  with the request's estimate, the estimator the app uses where a server reports no usage) and the JSON
  says ``estimated``; a real HTTP status is still named as such.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI, HttpError, Raw, ReplySpec
from tests.helpers import cli, fake_args

CHUNK = '{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}'
ERROR_EVENT = '{"error": {"message": "the model crashed (fake)", "type": "server_error"}}'
CASES: dict[str, tuple[ReplySpec, str]] = {
    "error event first": (Raw(f"data: {ERROR_EVENT}\n\n", "text/event-stream"), "The server's stream reported an error"),
    "error event after text": (
        Raw(f"data: {CHUNK}\n\ndata: {ERROR_EVENT}\n\n", "text/event-stream"),
        "The server's stream reported an error",
    ),
    "HTTP 400": (HttpError(400, "bad request (fake)"), "Model API error (HTTP 400)"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_failed_request_is_labelled_by_what_happened_and_counted_with_what_it_sent(
    case: str, tmp_path: Path, isolated_home: Path
) -> None:
    reply, says = CASES[case]
    with FakeOpenAI(default=reply) as server:
        done = cli("run", *fake_args(server), "--output-format", "json", "hello", cwd=tmp_path)
        result = json.loads(done.stdout)
        assert done.returncode == 1 and result["status"] == "error", done.stderr
        (error,) = result["errors"]
        assert says in error["message"], error["message"]
        assert "HTTP 500" not in error["message"]
        assert "the model crashed (fake)" in error["message"] or "bad request (fake)" in error["message"]
        usage = result["usage"]
        assert usage["requests"] == server.count
        assert usage["input_tokens"] > 0 and usage["estimated"] is True, usage  # the fake reports no usage for it
