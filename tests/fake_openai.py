"""A fake OpenAI-compatible chat-completions server on 127.0.0.1, scripted per request.

The one LLM stand-in besides ``FunctionModel`` (see ``tests/scripted.py``): the real app talks to it
over HTTP through ``--base-url``, so the whole client stack (openai SDK, pydantic-ai, retries,
timeouts) runs for real. Nothing leaves the loopback interface.

Use::

    with FakeOpenAI() as server:              # or the ``fake_openai`` pytest fixture
        server.script(
            Reply(tool_calls=[ToolCallReply("ipybox_execute_ipython_cell", {"code": "print(6 * 7)"})]),
            Reply("The answer is 42.", usage=(120, 9)),
        )
        ... run the app with ``--base-url server.url --model fake`` ...
        assert server.count == 2
        server.requests[1].tool_results()   # what the app sent back for the tool call

Every request takes the next scripted reply, in order. A reply is one of:

- ``Reply(text, tool_calls=[...], usage=(input, output))``: a streamed reply (or one JSON body when the
  request does not ask for ``stream``). Text comes in ``chunk``-sized deltas; each tool call's JSON
  arguments come in ``pieces`` deltas. The usage chunk is sent only when the request asks for it with
  ``stream_options.include_usage`` (as the OpenAI API does).
- Faults: ``HttpError(500)``, ``RateLimited(retry_after=1)`` (HTTP 429 with ``Retry-After``),
  ``Malformed()`` (a chunk or body that is not JSON), ``Cut("Partial answ")`` (the connection drops
  mid-reply: no final chunk, no ``[DONE]``), ``Stall(seconds)`` (sends headers, then nothing for that
  long, or until the server stops), ``Raw(body, content_type)`` (a body that is not the protocol: an HTML
  page, an empty body, JSON without ``choices``, an event stream without data — what a misconfigured
  ``--base-url`` answers).
- A tool call with invalid JSON arguments is ``ToolCallReply(name, '{"code": "pri')`` (a string is sent
  verbatim); an unknown tool is ``ToolCallReply("no_such_tool", {...})``.
- Any callable ``(RecordedRequest) -> reply``, to answer from what was sent.

When the script runs out the server answers with ``default`` (``None``: HTTP 400 naming the request
number, which no client retries), so a runaway retry loop shows as a count, not a hang.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "Cut",
    "FakeOpenAI",
    "HttpError",
    "Malformed",
    "RateLimited",
    "Raw",
    "RecordedRequest",
    "Reply",
    "ReplySpec",
    "Stall",
    "ToolCallReply",
]


@dataclass(frozen=True)
class ToolCallReply:
    """One tool call: ``arguments`` as a dict (sent as JSON) or a string (sent verbatim, valid or not)."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    call_id: str = ""
    pieces: int = 3  # the arguments are split over this many deltas

    def arguments_text(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass(frozen=True)
class Reply:
    """A normal reply: text and/or tool calls, and token usage."""

    text: str = ""
    tool_calls: Sequence[ToolCallReply] = ()
    usage: tuple[int, int] | None = (10, 5)  # (prompt tokens, completion tokens); None: none sent (llama.cpp)
    chunk: int = 4  # characters of text per delta
    delay: float = 0.0  # seconds between chunks
    finish_reason: str | None = None  # None: "tool_calls" when there are tool calls, else "stop"


@dataclass(frozen=True)
class HttpError:
    """An HTTP error with an OpenAI-style error body."""

    status: int = 500
    message: str = "internal server error (fake)"
    headers: dict[str, str] = field(default_factory=dict)


def RateLimited(retry_after: float = 1, message: str = "rate limit reached (fake)") -> HttpError:  # noqa: N802
    """HTTP 429 with a ``Retry-After`` header (seconds)."""
    return HttpError(429, message, {"Retry-After": f"{retry_after:g}"})


@dataclass(frozen=True)
class Malformed:
    """A reply that is not valid JSON: a broken SSE chunk when streaming, a broken body otherwise."""

    text_before: str = ""  # streamed text sent before the broken chunk


@dataclass(frozen=True)
class Cut:
    """The stream starts, sends ``text``, and the connection drops (no finish_reason, no [DONE]).

    ``clean=False`` ends the chunked body abruptly (the client sees an incomplete read);
    ``clean=True`` ends it properly but without ``finish_reason`` and ``[DONE]`` (a proxy cutting off).
    """

    text: str = "Partial answ"
    clean: bool = False


@dataclass(frozen=True)
class Stall:
    """Send the response headers (and ``text_before``), then nothing for ``seconds`` (``None``: until stop)."""

    seconds: float | None = None
    text_before: str = ""


@dataclass(frozen=True)
class Raw:
    """Exactly this body with this content type and status, whatever was asked (streamed or not)."""

    body: str | bytes = b""
    content_type: str = "text/html; charset=utf-8"
    status: int = 200


@dataclass
class RecordedRequest:
    """A request the server received."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # the parsed JSON body (None when it was not JSON)
    at: float  # time.monotonic() when it arrived

    @property
    def stream(self) -> bool:
        return bool(isinstance(self.body, dict) and self.body.get("stream"))

    @property
    def wants_usage(self) -> bool:
        options = self.body.get("stream_options") if isinstance(self.body, dict) else None
        return bool(isinstance(options, dict) and options.get("include_usage"))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", [])) if isinstance(self.body, dict) else []

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools the client offered."""
        tools = self.body.get("tools", []) if isinstance(self.body, dict) else []
        return [t.get("function", {}).get("name", "") for t in tools]

    def tool_results(self) -> list[str]:
        """The contents of the ``tool`` messages (results of earlier tool calls), in order."""
        return [str(m.get("content", "")) for m in self.messages if m.get("role") == "tool"]

    def last_user_text(self) -> str:
        for m in reversed(self.messages):
            if m.get("role") == "user":
                content = m.get("content")
                if isinstance(content, list):
                    return "".join(p.get("text", "") for p in content if isinstance(p, dict))
                return str(content)
        return ""


ReplySpec = Reply | HttpError | Malformed | Cut | Stall | Raw | Callable[[RecordedRequest], Any]


class FakeOpenAI:
    """The server. Start with ``start()`` or ``with``; ``url`` is the ``--base-url`` to give the app.

    Args:
        default: the reply once the script is used up (``None``: HTTP 400 naming the request).
        model: the model name reported in replies.
        models: the ids ``GET /models`` lists (``None``: ``model`` alone).
    """

    def __init__(
        self,
        default: ReplySpec | None = None,
        *,
        model: str = "fake-model",
        models: Sequence[str] | None = None,
    ) -> None:
        self.default = default
        self.model = model
        self.models = list(models) if models is not None else [model]
        self.model_list_requests = 0
        self.requests: list[RecordedRequest] = []
        self._script: list[ReplySpec] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- control -----------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL (``http://127.0.0.1:PORT/v1``)."""
        assert self._server is not None, "the server is not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def count(self) -> int:
        """Chat-completion requests received so far."""
        return len(self.requests)

    def script(self, *replies: ReplySpec) -> FakeOpenAI:
        """Append replies, one per coming request."""
        with self._lock:
            self._script.extend(replies)
        return self

    def reset(self) -> None:
        """Forget the script and the recorded requests."""
        with self._lock:
            self._script.clear()
            self.requests.clear()

    @property
    def pending(self) -> int:
        """Scripted replies not used yet."""
        return len(self._script)

    def start(self) -> FakeOpenAI:
        fake = self

        class Handler(_Handler):
            server_fake = fake

        self._stopping.clear()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # ends stalls
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- used by the handler -----------------------------------------------------------------

    def _next(self, request: RecordedRequest) -> Any:
        with self._lock:
            self.requests.append(request)
            spec: Any = self._script.pop(0) if self._script else self.default
        if spec is None:
            return HttpError(400, f"fake server: no scripted reply left for request {request.index + 1}")
        while callable(spec) and not isinstance(spec, type):
            spec = spec(request)
        return spec

    def _wait(self, seconds: float | None) -> None:
        self._stopping.wait(seconds)


class _Handler(BaseHTTPRequestHandler):
    server_fake: FakeOpenAI
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet test output
        pass

    def do_GET(self) -> None:  # noqa: N802
        if self.path.rstrip("/").endswith("/models"):
            fake = self.server_fake
            fake.model_list_requests += 1
            self._json(
                200, {"object": "list", "data": [{"id": name, "object": "model"} for name in fake.models]}
            )
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        fake = self.server_fake
        request = RecordedRequest(
            index=len(fake.requests),
            method="POST",
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            at=time.monotonic(),
        )
        spec = fake._next(request)
        try:
            self._answer(spec, request)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout): nothing more to send

    # -- replies -----------------------------------------------------------------------------

    def _answer(self, spec: Any, request: RecordedRequest) -> None:
        fake = self.server_fake
        match spec:
            case HttpError(status=status, message=message, headers=headers):
                err = {"error": {"message": message, "type": "fake_error", "code": status}}
                self._json(status, err, headers)
            case Malformed(text_before=before) if request.stream:
                self._start_stream()
                if before:
                    self._event(self._chunk({"role": "assistant", "content": before}))
                self._send_chunk(b'data: {"id": "broken", "choices": [{"delta": {"content": \n\n')
                self._send_chunk(b"data: [DONE]\n\n")
                self._end_stream()
            case Raw(body=body, content_type=content_type, status=status):
                data = body.encode() if isinstance(body, str) else body
                self._raw(status, data, content_type)
            case Malformed():
                self._raw(200, b'{"id": "broken", "choices": [', "application/json")
            case Cut(text=text, clean=clean):
                self._start_stream()
                self._event(self._chunk({"role": "assistant", "content": ""}))
                for piece in _pieces(text, 4):
                    self._event(self._chunk({"content": piece}))
                if clean:
                    self._end_stream()
                else:
                    self._drop()
            case Stall(seconds=seconds, text_before=before):
                self._start_stream()
                if before:
                    self._event(self._chunk({"role": "assistant", "content": before}))
                fake._wait(seconds)
                self._drop()
            case Reply() if request.stream:
                self._stream_reply(spec, request)
            case Reply():
                self._json(200, self._completion(spec))
            case _:
                raise TypeError(f"not a reply: {spec!r}")

    def _stream_reply(self, reply: Reply, request: RecordedRequest) -> None:
        self._start_stream()
        self._event(self._chunk({"role": "assistant", "content": ""}))
        for piece in _pieces(reply.text, reply.chunk):
            if reply.delay:
                time.sleep(reply.delay)
            self._event(self._chunk({"content": piece}))
        for k, call in enumerate(reply.tool_calls):
            call_id = call.call_id or f"call_{request.index}_{k}"
            text = call.arguments_text()
            head = {
                "index": k,
                "id": call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            self._event(self._chunk({"tool_calls": [head]}))
            for piece in _pieces(text, max(1, -(-len(text) // max(1, call.pieces)))):
                self._event(self._chunk({"tool_calls": [{"index": k, "function": {"arguments": piece}}]}))
        finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
        self._event(self._chunk({}, finish_reason=finish))
        if request.wants_usage and reply.usage is not None:
            usage = {"prompt_tokens": reply.usage[0], "completion_tokens": reply.usage[1],
                     "total_tokens": sum(reply.usage)}  # fmt: skip
            self._event({**self._chunk({}), "choices": [], "usage": usage})
        self._send_chunk(b"data: [DONE]\n\n")
        self._end_stream()

    def _completion(self, reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": c.call_id or f"call_{k}", "type": "function",
                 "function": {"name": c.name, "arguments": c.arguments_text()}}
                for k, c in enumerate(reply.tool_calls)
            ]  # fmt: skip
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.server_fake.model,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
            **({} if reply.usage is None else {"usage": {
                "prompt_tokens": reply.usage[0], "completion_tokens": reply.usage[1],
                "total_tokens": sum(reply.usage)}}),
        }  # fmt: skip

    def _chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": self.server_fake.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }

    # -- transport -----------------------------------------------------------------------------

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._raw(status, json.dumps(payload).encode(), "application/json", headers)

    def _raw(
        self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def _event(self, payload: dict[str, Any]) -> None:
        self._send_chunk(b"data: " + json.dumps(payload).encode() + b"\n\n")

    def _send_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _drop(self) -> None:
        """Close the connection without finishing the chunked body."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _pieces(text: str, size: int) -> Iterator[str]:
    size = max(1, size)
    for start in range(0, len(text), size):
        yield text[start : start + size]
