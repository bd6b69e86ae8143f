"""Whether an OpenAI-compatible server's reply is the protocol at all, and what came back when it is not.

A misconfigured ``base_url`` (a proxy's login page, a wrong path, a web server on the port) answers a
chat-completions request with something that is not a chat completion: an HTML page, an empty body,
plain text, JSON without ``choices``, an event stream without data. The client stack then fails deep
inside ("Streamed response ended without content or tool calls"), which says nothing about the cause.
Every reply of a ``base_url`` server passes ``check_reply`` (an HTTP response hook of its client):
``body_shape`` and ``event_shape`` are the one table of what is not the protocol, and such a reply
raises ``NotProtocolReply``, which names the URL and what came back. The model call reports it as a
model error and does not retry it (``model_call.py``): the same request gets the same page.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from httpx2 import AsyncByteStream  # the OpenAI client's HTTP stack (already loaded by pydantic-ai)

CHAT_PATH = "/chat/completions"
TRANSIENT = frozenset({408, 425, 429, 500, 502, 503, 504})
"""Statuses the model call retries: a proxy's error page then is a passing fault, not a wrong URL."""
WATCHED_BYTES = 64 * 1024
"""An event stream is watched until its first data event or this many bytes, whichever comes first."""


class NotProtocolReply(Exception):
    """The server answered with something that is not an OpenAI-compatible reply (``str()``: the message)."""

    def __init__(self, url: str, what: str) -> None:
        self.url = url
        self.what = what
        super().__init__(
            f"{url} answered with {what}, not an OpenAI-compatible reply: is the base URL right?"
        )


def _content_kind(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def body_shape(status: int, content_type: str, body: bytes) -> str | None:
    """What a whole (not event-stream) reply body is when it is not the protocol; ``None`` when it may be.

    JSON with ``choices`` is a completion and JSON with ``error`` is the server's own error (the client
    reports it); anything else names what came back.
    """
    prefix = "" if 200 <= status < 300 else f"HTTP {status} and "
    text = body.strip()
    if not text:
        return f"{prefix}an empty body"
    kind = _content_kind(content_type)
    if kind in ("text/html", "application/xhtml+xml") or text[:1] == b"<":
        return f"{prefix}an HTML page"
    try:
        value = json.loads(text)
    except ValueError:
        shown = f"a {kind} body" if kind else "a body"
        return f"{prefix}{shown} that is not JSON"
    if isinstance(value, dict) and ("choices" in value or "error" in value):
        return None
    if isinstance(value, dict) and not prefix:
        return "JSON without `choices`"
    return None if prefix else "JSON that is not a chat completion"


def event_shape(data: str) -> str | None:
    """What the first ``data:`` payload of an event stream is when it is not the protocol."""
    if data.strip() == "[DONE]":
        return "an event stream that ended before any reply"
    try:
        value = json.loads(data)
    except ValueError:
        return "an event stream whose data is not JSON"
    if isinstance(value, dict) and ("choices" in value or "error" in value):
        return None
    return "an event stream of JSON without `choices`"


def _base(url: str) -> str:
    return url[: -len(CHAT_PATH)] if url.endswith(CHAT_PATH) else url


class _WatchedStream(AsyncByteStream):
    """An event stream's bytes, passed on unchanged, until its first data event has been judged."""

    def __init__(self, stream: Any, url: str) -> None:
        self._stream = stream
        self._url = url
        self._seen = b""
        self._judged = False  # kept across iterations: the client iterates again to drain what is left

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            if not self._judged:
                self._seen += chunk
                self._judged = self._judge(self._seen, ended=False)
            yield chunk
        if not self._judged:
            self._judged = True
            self._judge(self._seen, ended=True)

    def _judge(self, seen: bytes, *, ended: bool) -> bool:
        """True once the stream is known to be the protocol; raises when it is known not to be."""
        for raw in seen.splitlines(keepends=True):
            if not raw.endswith((b"\n", b"\r")) and not ended:
                break  # an unfinished line: wait for more
            line = raw.decode("utf-8", "replace").strip()
            if line.startswith("data:"):
                what = event_shape(line[5:].strip())
                if what is not None:
                    raise NotProtocolReply(self._url, what)
                return True
        if ended:
            raise NotProtocolReply(self._url, "an event stream without any data")
        return len(seen) > WATCHED_BYTES

    async def aclose(self) -> None:
        await self._stream.aclose()


async def check_reply(response: Any) -> None:
    """The response hook of a ``base_url`` server's HTTP client (an ``httpx`` response).

    Raises:
        NotProtocolReply: the reply to a chat-completions request is not the protocol.
    """
    request = response.request
    url = str(request.url)
    if (
        request.method != "POST"
        or not url.rstrip("/").endswith(CHAT_PATH)
        or response.status_code in TRANSIENT
    ):
        return
    content_type = response.headers.get("content-type", "")
    if _content_kind(content_type) == "text/event-stream" and 200 <= response.status_code < 300:
        response.stream = _WatchedStream(response.stream, _base(url))
        return
    body = await response.aread()
    what = body_shape(response.status_code, content_type, body)
    if what is not None:
        raise NotProtocolReply(_base(url), what)


def not_protocol(exc: BaseException) -> NotProtocolReply | None:
    """The ``NotProtocolReply`` an error of the client stack was caused by, if any (it wraps it)."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, NotProtocolReply):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


__all__ = ["NotProtocolReply", "body_shape", "check_reply", "event_shape", "not_protocol"]
