"""The protocol's own stdin/stdout, kept apart from everything else the process (and its kernels) writes.

ACP is JSON-RPC over the agent's stdio, one message per line, so a stray ``print`` or a child process
writing to fd 1 would corrupt the stream. ``protocol_streams()`` moves the protocol to private copies
of fds 0 and 1, then points fd 1 at stderr and fd 0 at ``/dev/null`` (children inherit those, and a
kernel can never read a message meant for us). ``LineTransport`` frames messages and answers a line
that is not JSON-RPC with a JSON-RPC error (the SDK's own framing only logs and skips it).
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple, Protocol

from freeact_tui.acp.wire import INVALID_REQUEST, WireError, decode_message, encode_message

logger = logging.getLogger(__name__)

# Messages bigger than this are a protocol error, not a reason to run out of memory.
LINE_LIMIT = 64 * 1024 * 1024


def guard_stdio() -> tuple[int, int]:
    """Take fds 0 and 1 for the protocol; return the private copies (read, write).

    Afterwards fd 1 (and ``sys.stdout``) write to stderr and fd 0 reads ``/dev/null``.
    """
    sys.stdout.flush()
    proto_in = os.dup(0)  # os.dup makes non-inheritable fds: no child gets the protocol's pipes
    proto_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return proto_in, proto_out


class ByteSink(Protocol):
    """Where the protocol's bytes go."""

    async def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...


class _PipeSink:
    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, data: bytes) -> None:
        self._writer.write(data)
        await self._writer.drain()

    def close(self) -> None:
        self._writer.close()


class _FileSink:
    """stdout redirected to a regular file (no pipe to wait on): plain blocking writes."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def close(self) -> None:
        os.close(self._fd)


def _feed_from_thread(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, fd: int) -> None:
    """stdin redirected from a regular file (the event loop cannot watch it): read it in a thread."""

    def read() -> None:
        try:
            while data := os.read(fd, 65536):
                loop.call_soon_threadsafe(reader.feed_data, data)
        finally:
            loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=read, name="acp-stdin", daemon=True).start()


async def protocol_streams(proto_in: int, proto_out: int) -> tuple[asyncio.StreamReader, ByteSink]:
    """The protocol's input as a stream reader and its output as a sink (see ``guard_stdio``)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    if stat.S_ISREG(os.fstat(proto_in).st_mode):
        _feed_from_thread(loop, reader, proto_in)
    else:
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(proto_in, "rb", buffering=0)
        )
    if stat.S_ISREG(os.fstat(proto_out).st_mode):
        return reader, _FileSink(proto_out)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(proto_out, "wb", buffering=0)
    )
    return reader, _PipeSink(asyncio.StreamWriter(transport, protocol, None, loop))


class Rewritten(NamedTuple):
    """A message as the server reads it, and the answer sent for it at once (``None``: the server's)."""

    message: dict[str, Any] | None
    """``None``: answered here (``answer``), nothing for the server."""
    answer: dict[str, Any] | None = None


def _error(code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": None, "error": error}


class LineTransport:
    """Newline-delimited JSON-RPC messages over asyncio streams (the SDK's ``Transport`` protocol).

    A line that is not JSON gets a parse error (-32700), one that is not a JSON-RPC 2.0 message (the
    envelope check of ``wire.message_of``) an invalid request error (-32600); both with ``id: null``, as
    JSON-RPC 2.0 asks. The connection goes on. A client's answer that is not a valid response but names
    the request it answers fails that request (``message_of``); a line that cannot be read at all cannot
    be matched to a request: it is answered -32700 and the request goes on waiting (within its bound);
    ``on_unreadable`` tells the session of the requests that wait.
    Decoding and encoding are ``wire.py``'s: what is received holds only valid strings and finite
    numbers, what is sent is always one line of JSON.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: ByteSink,
        rewrite: Callable[[dict[str, Any]], Rewritten] | None = None,
    ) -> None:
        self.rewrite = rewrite
        """Applied to each message received (legacy methods read as current ones); the answer it gives, if
        any, is sent at once (a notification sent as a request is answered ``{}``)."""
        self._reader = reader
        self._writer = writer
        self._lock = asyncio.Lock()
        self._closed = False
        self._gone = False
        """The client closed its end: what is sent to it is dropped (a normal end, not an error)."""
        self._unread: list[dict[str, Any] | None] = []
        self.on_unreadable: Callable[[], Awaitable[None]] | None = None
        """Told of each line that cannot be read at all (after its -32700): it may have been meant as an
        answer to a request of ours, which it cannot answer (``FreeactAcpAgent.unreadable_line``)."""

    def unread(self, message: dict[str, Any] | None) -> None:
        """Give ``message`` back: the next ``receive`` returns it (a message looked at before the SDK's
        connection reads the stream)."""
        self._unread.append(message)

    async def send(self, message: dict[str, Any]) -> None:
        """Write ``message``; once the client has closed its end (or the server closed it), messages are
        dropped: a client that went away is a normal end, logged once as an info line, never an error."""
        data = encode_message(message)
        async with self._lock:
            if self._closed or self._gone:
                return
            try:
                await self._writer.write(data)
            except (ConnectionError, OSError) as exc:  # a broken pipe, a reset: the client is gone
                self._gone = True
                logger.info("the client closed the connection (%s); what is left to send is dropped", exc)

    async def receive(self) -> dict[str, Any] | None:
        """The next message for the server (rewritten), or ``None`` at the end of the input."""
        while True:
            message = await self._next()
            if message is None:
                return None
            rewritten = await self._rewritten(message)
            if rewritten is not None:
                return rewritten

    async def _next(self) -> dict[str, Any] | None:
        if self._unread:
            return self._unread.pop()
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:
                line = exc.partial  # the last line without its newline, or b"" at the end
                if not line.strip():
                    return None
            except asyncio.LimitOverrunError:
                await self._skip_long_line()
                await self.send(_error(INVALID_REQUEST, f"message longer than {LINE_LIMIT} bytes"))
                continue
            if not line.strip():
                continue
            try:
                return decode_message(line)
            except WireError as exc:
                logger.warning("not a message this server takes (%s): %.200r", exc, line)
                await self.send(_error(exc.code, str(exc)))
                if self.on_unreadable is not None:  # no id to match: it answers no request of ours
                    try:
                        await self.on_unreadable()
                    except Exception as hook_error:  # telling of it must never stop the reading
                        logger.warning("noting an unreadable line failed: %s", hook_error)

    async def _rewritten(self, message: dict[str, Any]) -> dict[str, Any] | None:
        if self.rewrite is None:
            return message
        rewritten = self.rewrite(message)
        if rewritten.answer is not None:
            await self.send(rewritten.answer)
        return rewritten.message

    async def _skip_long_line(self) -> None:
        while True:
            try:
                await self._reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as exc:
                await self._reader.readexactly(exc.consumed)
            except asyncio.IncompleteReadError:
                return

    async def close(self) -> None:
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._writer.close()
            except Exception:  # the client may be gone already
                logger.debug("closing stdout failed", exc_info=True)


__all__ = ["ByteSink", "LineTransport", "Rewritten", "guard_stdio", "protocol_streams"]
