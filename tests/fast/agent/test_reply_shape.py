"""What is not an OpenAI-compatible reply is named, never taken for one (``agent/reply_shape.py``).

A table of the bodies a misconfigured base URL answers with, and generated ones: HTML pages, empty and
blank bodies, text that is not JSON, JSON of any shape without ``choices``; a real completion, a server's
own error object and a proper event stream are never called "not the protocol".
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from freeact_tui.agent.reply_shape import NotProtocolReply, body_shape, event_shape, not_protocol

COMPLETION = json.dumps({"id": "c", "object": "chat.completion", "choices": [{"index": 0, "message": {}}]})
CHUNK = json.dumps({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}}]})


@pytest.mark.parametrize(
    ("status", "content_type", "body", "says"),
    [
        (200, "text/html; charset=utf-8", b"<!DOCTYPE html><title>Sign in</title>", "an HTML page"),
        (200, "application/json", b"<html><body>proxy</body></html>", "an HTML page"),
        (200, "text/plain", b"", "an empty body"),
        (200, "application/json", b"  \n", "an empty body"),
        (200, "text/plain", b"Not Found", "a text/plain body that is not JSON"),
        (200, "", b"ok", "a body that is not JSON"),
        (200, "application/json", b'{"status": "ok"}', "JSON without `choices`"),
        (200, "application/json", b"[1, 2]", "JSON that is not a chat completion"),
        (404, "text/html", b"<html>404</html>", "HTTP 404 and an HTML page"),
        (401, "text/plain", b"", "HTTP 401 and an empty body"),
        (200, "application/json", COMPLETION.encode(), None),
        (200, "application/json", b'{"error": {"message": "no such model"}}', None),
        (404, "application/json", b'{"detail": "Not Found"}', None),  # the client reports the status
    ],
)
def test_each_body_is_named_or_passed(status: int, content_type: str, body: bytes, says: str | None) -> None:
    assert body_shape(status, content_type, body) == says


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ("[DONE]", "an event stream that ended before any reply"),
        ("{broken", "an event stream whose data is not JSON"),
        ('{"object": "x"}', "an event stream of JSON without `choices`"),
        (CHUNK, None),
        ('{"error": {"message": "overloaded"}}', None),
    ],
)
def test_the_first_event_of_a_stream_is_named_or_passed(data: str, says: str | None) -> None:
    assert event_shape(data) == says


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@given(value=json_values)
def test_json_without_choices_is_never_a_reply(value: object) -> None:
    if isinstance(value, dict) and ({"choices", "error"} & set(value)):
        return
    body = json.dumps(value).encode()
    assert body_shape(200, "application/json", body) is not None
    assert event_shape(body.decode()) is not None


@given(page=st.text(max_size=200), tag=st.sampled_from(["html", "HTML", "!DOCTYPE html", "head", "body"]))
def test_an_html_page_is_named_as_one(page: str, tag: str) -> None:
    body = f"  <{tag}>{page}</{tag}>".encode()
    assert body_shape(200, "text/html", body) == "an HTML page"
    assert body_shape(200, "application/octet-stream", body) == "an HTML page"


def test_the_reason_is_found_however_deep_the_client_stack_wrapped_it() -> None:
    reason = NotProtocolReply("http://host/v1", "an HTML page")
    try:
        try:
            raise reason
        except NotProtocolReply as exc:
            raise ConnectionError("Connection error.") from exc
    except ConnectionError as outer:
        assert not_protocol(outer) is reason
    assert str(reason).startswith("http://host/v1 answered with an HTML page, not an OpenAI-compatible reply")
    assert not_protocol(ValueError("x")) is None


async def test_a_proper_stream_passes_the_check_to_its_end() -> None:
    """The check watches a stream's first event only, and the client's drain after ``[DONE]`` is no new stream."""
    from openai import AsyncOpenAI

    from freeact_tui.agent.models import _checked_client
    from tests.fake_openai import FakeOpenAI, Reply

    with FakeOpenAI(default=Reply("hello there, a reply in pieces")) as server:
        client = AsyncOpenAI(base_url=server.url, api_key="x", max_retries=0, http_client=_checked_client())
        stream = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        text = "".join([chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices])
        await client.close()
    assert text == "hello there, a reply in pieces"
