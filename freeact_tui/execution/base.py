"""The executor contract: where code actions run (local kernel, sandbox, Docker, remote gateway).

The agent drives an executor only through this protocol, so execution backends are interchangeable.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from freeact_tui.events import KernelState

# The reason of a restart because a cell ignored its interrupt (the UI says so in the log). Here, not in
# cell_run: the UI imports it, and cell_run would bring aiohttp into the first screen's imports.
RESTART_AFTER_INTERRUPT = "the cell did not stop after an interrupt"

ApprovalKind = Literal["shell", "script", "mcp"]


@dataclass
class ExecApproval:
    """Something inside a running cell waits for a decision before it proceeds.

    ``kind`` is ``shell`` (a ``!cmd`` line; ``command`` has Python variables expanded), ``script``
    (a ``%%bash``/``%%sh`` cell) or ``mcp`` (a programmatic MCP tool call: ``server``, ``tool``,
    ``args``). Call ``accept()`` or ``reject()`` exactly once.
    """

    kind: ApprovalKind
    command: str = ""
    server: str = ""
    tool: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    respond: Callable[[bool], Awaitable[None]] | None = field(default=None, repr=False)

    async def accept(self) -> None:
        if self.respond is not None:
            await self.respond(True)

    async def reject(self) -> None:
        if self.respond is not None:
            await self.respond(False)


@dataclass
class ExecChunk:
    """Output text as the kernel produces it (stdout, stderr, display text)."""

    text: str


@dataclass
class ExecResult:
    """The end of one cell: all of its output, images saved as PNG files, and whether it failed.

    ``kernel_died`` is set when the kernel process died during the cell (the executor restarts it).
    ``timed_out`` / ``cancelled`` say why a cell ended early (the kernel was interrupted).
    """

    text: str
    images: list[Path] = field(default_factory=list)
    is_error: bool = False
    kernel_died: bool = False
    timed_out: bool = False
    cancelled: bool = False


ExecItem = ExecApproval | ExecChunk | ExecResult
StateListener = Callable[[KernelState, str], None]


class ExecutorError(Exception):
    """The executor cannot run code (kernel failed to start, backend unavailable); message for users."""


@runtime_checkable
class Executor(Protocol):
    """A stateful kernel that runs code actions and asks for approval of what runs inside them."""

    @property
    def state(self) -> KernelState: ...

    def add_state_listener(self, listener: StateListener) -> None:
        """``listener(state, detail)`` is called on every state change (starting, ready, busy, …)."""
        ...

    async def start(self) -> None:
        """Start the kernel; returns when it accepts code. Raises ExecutorError with a clear message."""
        ...

    async def stop(self) -> None: ...

    def stream(self, code: str, timeout: float | None = None) -> AsyncIterator[ExecItem]:
        """Run ``code``; yield approvals and chunks, end with exactly one ``ExecResult``.

        Never loses output. ``timeout`` counts execution only, not approval waits; when it runs
        out the kernel is interrupted and the result has ``timed_out=True``. A dead kernel yields a
        result with ``kernel_died=True`` and is restarted before the next cell.
        """
        ...

    async def interrupt(self) -> None:
        """Interrupt the running cell (the ongoing ``stream`` ends with ``cancelled=True``)."""
        ...

    async def reset(self) -> None:
        """Restart the kernel: all state is lost."""
        ...

    def set_mcp_servers(self, servers: Mapping[str, Mapping[str, Any]] | None) -> None:
        """Allow code to call exactly these MCP servers (package name -> connection params)."""
        ...
