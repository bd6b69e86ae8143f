"""An ACP client for tests: the SDK's own client side, spawning the real ``freeact-tui acp`` subprocess.

``RecordingClient`` keeps every ``session/update`` and answers ``session/request_permission`` from a
script of option ids (``"never"``: never answers, until the request is cancelled). ``EditorClient``
adds ``fs/read_text_file`` and ``fs/write_text_file`` over unsaved buffers, as an editor does.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp import RequestError, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
    WriteTextFileResponse,
)

from tests.helpers import CLI

ROOT = Path(__file__).resolve().parents[1]


class RecordingClient:
    """Records updates (as JSON-ready dicts, in order) and permission requests."""

    def __init__(self, answers: list[str] | None = None) -> None:
        self.answers = list(answers or [])
        self.updates: list[dict[str, Any]] = []
        self.asked: list[tuple[ToolCallUpdate, list[PermissionOption]]] = []
        self.asked_event = asyncio.Event()
        self.times: list[float] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.times.append(time.perf_counter())
        self.updates.append(update.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.append((tool_call, options))
        self.asked_event.set()
        answer = self.answers.pop(0) if self.answers else "allow_once"
        if answer == "never":  # a client that breaks the protocol: not even a cancel gets an answer
            await asyncio.Event().wait()
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=answer))

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [u for u in self.updates if u["sessionUpdate"] == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u["content"].get("text", "") for u in self.of(kind))

    def call_updates(self, tool_call_id: str) -> list[dict[str, Any]]:
        return [u for u in self.updates if u.get("toolCallId") == tool_call_id]

    def statuses(self, tool_call_id: str) -> list[str]:
        return [u["status"] for u in self.call_updates(tool_call_id) if "status" in u]

    async def until(self, test: Callable[[], bool], limit: float = 60) -> None:
        deadline = time.monotonic() + limit
        while not test():
            assert time.monotonic() < deadline, f"timed out; updates: {self.updates[-5:]}"
            await asyncio.sleep(0.02)


class EditorClient(RecordingClient):
    """A client with files open in an editor: ``buffers`` (path → unsaved text) are what it reads; a
    write replaces the buffer and saves it to disk, as Zed does (unless ``saves`` is false)."""

    capabilities = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))

    def __init__(
        self, answers: list[str] | None = None, buffers: dict[str, str] | None = None, *, saves: bool = True
    ) -> None:
        super().__init__(answers)
        self.buffers = dict(buffers or {})
        self.saves = saves  # False: a write stays in the buffer, unsaved
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            text = await asyncio.to_thread(Path(path).read_text, encoding="utf-8")
            return ReadTextFileResponse(content=text)
        except OSError as exc:
            raise RequestError.resource_not_found(path) from exc

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        if self.saves:
            await asyncio.to_thread(Path(path).write_text, content, encoding="utf-8")
        return WriteTextFileResponse()


def content_texts(update: dict[str, Any]) -> str:
    """The text of a tool call (update)'s content blocks, joined."""
    return "\n".join(c.get("content", {}).get("text", "") for c in update.get("content", []))


def write_config(tmp_path: Path, *, checkpoints: bool = False) -> Path:
    """A config for one-kernel tests: no warm subagent kernel, a tool-calling model, checkpoints off unless asked."""
    path = tmp_path / "acp.toml"
    on = "true" if checkpoints else "false"
    path.write_text(f'subagent_pool_size = 0\ncheckpoints = {on}\naction_protocol = "tools"\n')
    return path


def agent_env() -> dict[str, str]:
    """This tree's code, the test's isolated home (set by conftest), no API keys."""
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@asynccontextmanager
async def acp_agent(
    client: RecordingClient, *args: str, cwd: Path
) -> AsyncIterator[tuple[ClientSideConnection, asyncio.subprocess.Process]]:
    """``freeact-tui <args> acp`` as a subprocess with ``client`` connected; initialized."""
    async with spawn_agent_process(
        client,
        *CLI,
        *args,
        "acp",
        env=agent_env(),
        cwd=cwd,
        # stderr to the test's own (read by nobody, a pipe could fill); time to stop kernels at the end.
        transport_kwargs={"stderr": None, "shutdown_timeout": 30},
    ) as (conn, proc):
        capabilities = getattr(client, "capabilities", None)
        await asyncio.wait_for(conn.initialize(protocol_version=1, client_capabilities=capabilities), 60)
        yield conn, proc
