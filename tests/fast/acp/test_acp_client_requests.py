"""The class "a request to the client with no bound": every request the agent sends to the client
(``fs/*``, ``session/request_permission``, ``terminal/*`` if ever) goes through ``ask_client``, which
fails after its bound with a line that says so, and a cancel interrupts the wait at once."""

from __future__ import annotations

import ast
import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from acp.schema import FileSystemCapabilities

from freeact_tui.acp import client_requests
from freeact_tui.acp.client_files import ClientFiles
from freeact_tui.acp.client_requests import DECISION_TIMEOUT, ClientTimeout, ask_client, decision_bound
from freeact_tui.actions.file_access import FileAccessError
from freeact_tui.project.config import Config

ACP = Path(client_requests.__file__).parent
CLIENT_METHODS = {
    "request_permission",
    "read_text_file",
    "write_text_file",
    "create_terminal",
    "terminal_output",
    "wait_for_terminal_exit",
    "kill_terminal",
    "release_terminal",
    "ext_method",
}
"""The ``acp.interfaces.Client`` methods that are requests (they wait for an answer)."""


def _unbounded(tree: ast.AST) -> list[int]:
    """Lines where a client request is made other than as the first argument of ``ask_client``."""
    bounded = {
        id(node.args[0])
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "ask_client"
        and node.args
    }
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in CLIENT_METHODS
        and id(node) not in bounded
    ]


def test_every_request_to_the_client_is_bounded() -> None:
    found = {path.name: _unbounded(ast.parse(path.read_text())) for path in sorted(ACP.glob("*.py"))}
    assert {name: lines for name, lines in found.items() if lines} == {}
    made = sum(
        1
        for path in ACP.glob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr in CLIENT_METHODS
    )
    assert made >= 4  # the scan sees the requests (permission, trust, read, write)


def test_the_scan_finds_an_unbounded_request() -> None:
    code = "async def f(c):\n    await c.read_text_file(session_id='s', path='p')\n    await ask_client(c.request_permission(), 1, 'x')\n"
    assert _unbounded(ast.parse(code)) == [2]


class Silent:
    """A client that never answers, and notes each request that was abandoned (cancelled)."""

    def __init__(self) -> None:
        self.abandoned = 0

    async def _never(self) -> Any:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.abandoned += 1
            raise

    async def read_text_file(self, **kwargs: Any) -> Any:
        return await self._never()

    async def write_text_file(self, **kwargs: Any) -> Any:
        return await self._never()


FS = FileSystemCapabilities(read_text_file=True, write_text_file=True)


@pytest.mark.parametrize("method", ["read", "write"])
def test_a_file_request_never_answered_fails_after_its_bound_with_a_clear_line(method: str) -> None:
    client = Silent()
    files = ClientFiles(client, "s1", FS, timeout=0.2)  # type: ignore[arg-type]

    async def go() -> None:
        if method == "read":
            await files.read_text("/w/a.txt")
        else:
            await files.write_text("/w/a.txt", "x")

    started = time.monotonic()
    with pytest.raises(FileAccessError) as raised:
        asyncio.run(go())
    assert time.monotonic() - started < 5
    assert f"did not answer fs/{method}_text_file of /w/a.txt within 0.2 s" in str(raised.value)
    assert client.abandoned == 1  # the request was given up, not left waiting


def test_a_cancel_interrupts_a_file_request_at_once() -> None:
    client = Silent()
    files = ClientFiles(client, "s1", FS)  # the default bound: 30 s

    async def go() -> float:
        task = asyncio.create_task(files.read_text("/w/a.txt"))
        await asyncio.sleep(0.1)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    assert asyncio.run(go()) < 1
    assert client.abandoned == 1


def test_ask_client_passes_answers_and_errors_through() -> None:
    async def answer() -> str:
        return "yes"

    async def fail() -> str:
        raise ValueError("no such file")

    assert asyncio.run(ask_client(answer(), 1, "x")) == "yes"
    with pytest.raises(ValueError, match="no such file"):
        asyncio.run(ask_client(fail(), 1, "x"))
    with pytest.raises(ClientTimeout, match="did not answer the thing within 0.05 s"):
        asyncio.run(ask_client(asyncio.sleep(5), 0.05, "the thing"))


def test_a_permission_request_waits_the_configured_approval_timeout_or_the_default() -> None:
    assert decision_bound(Config(approval_timeout=42)) == 42
    assert decision_bound(Config()) == DECISION_TIMEOUT
