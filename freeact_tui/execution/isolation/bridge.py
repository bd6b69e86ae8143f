"""A byte pipe between a host TCP port and a Unix socket, the host's half of the sandbox's port bridges.

The sandbox has its own network namespace, so its TCP ports are out of reach; Unix sockets in a
directory bound into it are not. Inside, ``socat`` joins those sockets to TCP ports of the
namespace; this module is the outside half, in-process and on a port the OS chooses.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from freeact_tui.execution.base import ExecutorError

Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]

_CHUNK = 1 << 16


class StreamBridge:
    """Accepts connections on one address and pipes each to a fresh connection to another.

    A connection whose other end cannot be reached is closed at once (clients then retry), so the
    bridge may listen before its target does.

    Args:
        connect: Opens the connection to the target.
    """

    def __init__(self, connect: Callable[[], Awaitable[Streams]]) -> None:
        self._connect = connect
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._handlers: set[asyncio.Task[None]] = set()

    @classmethod
    def to_unix(cls, path: Path) -> StreamBridge:
        """A bridge whose target is the Unix socket at ``path``."""
        return cls(lambda: asyncio.open_unix_connection(str(path)))

    @classmethod
    def to_tcp(cls, host: str, port: int) -> StreamBridge:
        """A bridge whose target is ``host:port`` over TCP."""
        return cls(lambda: asyncio.open_connection(host, port))

    async def listen_tcp(self, host: str, port: int) -> int:
        """Listen on ``host:port`` (0: a free port).

        Returns:
            The port listened on.

        Raises:
            OSError: The address cannot be bound.
        """
        self._server = await asyncio.start_server(self._handle, host, port, reuse_address=True)
        return int(self._server.sockets[0].getsockname()[1])

    async def listen_unix(self, path: Path) -> None:
        """Listen on a Unix socket at ``path`` (only the owner may connect).

        Raises:
            OSError: The socket cannot be created.
        """
        self._server = await asyncio.start_unix_server(self._handle, str(path))
        os.chmod(path, 0o600)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self._writers.add(writer)
        upstream: asyncio.StreamWriter | None = None
        try:
            up_reader, upstream = await self._connect()
            self._writers.add(upstream)
            _no_delay(upstream)
            await asyncio.gather(_pipe(reader, upstream), _pipe(up_reader, writer))
        except OSError:
            pass  # the target is not listening (yet): the client sees the connection close
        finally:
            for w in (writer, upstream):
                if w is not None:
                    self._writers.discard(w)
                    w.close()
            self._handlers.discard(task)

    async def close(self) -> None:
        """Stop listening and cut every open connection."""
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()
        handlers = list(self._handlers)
        if handlers:
            await asyncio.wait(handlers, timeout=2)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy until end of stream, then half-close; on an error close ``writer`` so its peer ends too."""
    try:
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except OSError:
        writer.close()


def _no_delay(writer: asyncio.StreamWriter) -> None:
    # Small websocket frames must not wait for delayed ACKs (asyncio sets this only on some paths).
    sock = writer.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class PortBridges:
    """The two crossings of an isolated kernel (sandbox or container) with no network of its own.

    In a private directory (shared with the isolated side): ``gateway.sock``, where the isolated
    side serves its gateway, reached from a TCP port on the host; and ``tool.sock``, which the
    host serves, piping to the tool server's TCP port.

    Args:
        prefix: Name prefix of the socket directory (short, under /tmp: socket paths have at most 107 bytes).
    """

    def __init__(self, prefix: str) -> None:
        self.socket_dir = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
        self._bridges: list[StreamBridge] = []

    @property
    def gateway_socket(self) -> Path:
        return self.socket_dir / "gateway.sock"

    @property
    def tool_socket(self) -> Path:
        return self.socket_dir / "tool.sock"

    async def open(self, host: str, port: int, tool_port: int, what: str) -> int:
        """Listen on both ends; return the host port that reaches the gateway.

        Raises:
            ExecutorError: a bridge cannot listen (``what`` names the isolation in the message).
        """
        gateway_bridge = StreamBridge.to_unix(self.gateway_socket)
        tool_bridge = StreamBridge.to_tcp("127.0.0.1", tool_port)
        self._bridges = [gateway_bridge, tool_bridge]
        try:
            bound = await gateway_bridge.listen_tcp(host, port)
            await tool_bridge.listen_unix(self.tool_socket)
        except OSError as e:
            raise ExecutorError(f"Cannot open the {what}'s port bridges: {e}") from e
        return bound

    async def close(self) -> None:
        """Close both bridges and remove the socket directory."""
        bridges, self._bridges = self._bridges, []
        for bridge in bridges:
            await bridge.close()
        shutil.rmtree(self.socket_dir, ignore_errors=True)
