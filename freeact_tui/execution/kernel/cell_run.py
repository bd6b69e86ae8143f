"""One cell in flight in the local kernel: its event queue, its time budget and its pending approvals."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from freeact_tui.execution.base import (
    RESTART_AFTER_INTERRUPT,
    ExecApproval,
    ExecChunk,
    ExecItem,
    ExecResult,
)
from freeact_tui.execution.kernel.client import CellEnd, KernelConnection, KernelGone, OutputText
from freeact_tui.execution.tools.allowlist import exec_approval

if TYPE_CHECKING:
    from mcpygen.tool_exec.approval.client import ApprovalRequest

# How long a timed-out cell may take to stop after the interrupt before the kernel is restarted instead.
INTERRUPT_GRACE = 3.0
# The same when the user cancels (Esc/Ctrl+C): whatever runs stops within about a second.
CANCEL_GRACE = 1.0
# How long a `!cmd` approval may wait for its marker in the output (see kernel_init.SYNC_MARK).
_SYNC_HOLD = 0.5
# The grace by the reason the cell is being stopped.
_GRACE = {"cancelled": CANCEL_GRACE, "timed_out": INTERRUPT_GRACE}


class Wake:
    """Queue marker: an approval was decided, recompute the time budget."""


class Stop:
    """Queue marker: the user asked to interrupt the cell."""


@dataclass(frozen=True)
class Failed:
    """Queue marker: the executor failed under the cell (``reason`` says why); the cell ends with it."""

    reason: str


CellItem = OutputText | CellEnd | KernelGone | ExecApproval | Wake | Stop | Failed


class PendingRequest(Protocol):
    """An approval request of the tool server (mcpygen's ``ApprovalRequest``)."""

    async def accept(self) -> None: ...

    async def reject(self) -> None: ...


class Budget:
    """Execution time of a cell, paused while any approval is pending."""

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.used = 0.0
        self.since = time.monotonic()
        self.pending = 0

    def pause(self) -> None:
        if self.pending == 0:
            self.used += time.monotonic() - self.since
        self.pending += 1

    def resume(self) -> None:
        self.pending -= 1
        if self.pending == 0:
            self.since = time.monotonic()

    def remaining(self) -> float | None:
        if self.timeout is None or self.pending:
            return None
        return self.timeout - self.used - (time.monotonic() - self.since)


class _MarkerSync:
    """``!cmd`` approvals held until their marker arrives in the output, so each shows after the output
    printed before it (see kernel_init.SYNC_MARK); a marker that comes first lets its approval pass."""

    def __init__(self, synced: bool) -> None:
        self.synced = synced  # the warm-up installed the markers
        self.held: list[ExecApproval] = []
        self.marks = 0  # markers that arrived before their approval
        self.hold_until = 0.0

    def wait(self, now: float) -> float | None:
        """Seconds until the held approvals are shown anyway, or ``None`` when none is held."""
        return self.hold_until - now if self.held else None

    def markers(self, count: int) -> list[ExecApproval]:
        """``count`` markers arrived: the held approvals they release."""
        released = self.held[:count]
        del self.held[:count]
        self.marks += count - len(released)
        return released

    def admit(self, item: ExecApproval) -> bool:
        """Whether an approval shows now (else it is held for its marker)."""
        if item.kind in ("shell", "script") and self.synced and not self.marks:
            self.hold_until = self.hold_until if self.held else time.monotonic() + _SYNC_HOLD
            self.held.append(item)
            return False
        if item.kind != "mcp":
            self.marks = max(0, self.marks - 1)
        return True

    def due(self, now: float) -> bool:
        return bool(self.held) and now >= self.hold_until

    def release(self) -> list[ExecApproval]:
        """Every held approval, in order; none is held after."""
        released, self.held = self.held, []
        return released


class CellRun:
    """One cell in flight: everything its stream yields arrives through ``queue``.

    Args:
        timeout: Seconds of execution allowed (approval waits excluded), or None.
        lock: The executor's lock, held for the cell and released when it is over.
    """

    def __init__(self, timeout: float | None, lock: asyncio.Lock) -> None:
        self.lock = lock
        self.queue: asyncio.Queue[CellItem] = asyncio.Queue()
        self.budget = Budget(timeout)
        self.undecided: set[Callable[[bool], Awaitable[None]]] = set()
        self.finished = False
        # Set when the cell ignored the interrupt: its kernel is to be replaced once its result is out.
        self.restart_reason: str | None = None

    async def reject_pending(self) -> None:
        for respond in list(self.undecided):
            await respond(False)

    def offer(self, approval: ExecApproval, request: PendingRequest, approval_timeout: float | None) -> None:
        """Queue ``approval`` for the stream's consumer; its decision answers ``request``.

        The budget is paused until the decision (or ``approval_timeout``, when the tool server
        fails the call on its own).
        """
        self.budget.pause()
        decided = False

        def settle() -> bool:
            nonlocal decided
            if decided:
                return False
            decided = True
            self.undecided.discard(respond)
            self.budget.resume()
            self.queue.put_nowait(Wake())
            return True

        async def respond(ok: bool) -> None:
            if settle():
                await (request.accept() if ok else request.reject())

        if approval_timeout is not None:
            # The tool server fails the call at that moment; stop pausing the budget then too.
            asyncio.get_running_loop().call_later(approval_timeout, settle)
        approval.respond = respond
        self.undecided.add(respond)
        self.queue.put_nowait(approval)

    async def drive(
        self,
        conn: KernelConnection,
        *,
        synced: bool,
        executor_stopping: Callable[[], bool],
    ) -> AsyncIterator[ExecItem]:
        """Turn the queue into approvals and chunks in output order; the last item is the result.

        A cell that ignores the interrupt ends at once, with ``restart_reason`` set: the caller
        replaces the kernel after the result (the turn does not wait for the new kernel).

        Args:
            conn: The kernel running the cell (interrupted on timeout or ``Stop``).
            synced: The warm-up installed the approval markers (``!cmd`` approvals wait for theirs).
            executor_stopping: Whether the executor is being stopped (a dead kernel is then no news).
        """
        timeout = self.budget.timeout
        seen: list[str] = []  # output so far, for a cell that has to be abandoned
        sync = _MarkerSync(synced)
        stopping: str | None = None  # "cancelled" or "timed_out" once the kernel was interrupted
        grace_until = 0.0
        while True:
            now = time.monotonic()
            waits = [grace_until - now if stopping else self.budget.remaining(), sync.wait(now)]
            item = await next_item(self.queue, min((w for w in waits if w is not None), default=None))
            match item:
                case OutputText(text=text, sync=markers):
                    if text:
                        seen.append(text)
                        yield ExecChunk(text)
                    for released in sync.markers(markers):
                        yield released
                case ExecApproval() if stopping is not None:
                    await item.reject()
                case ExecApproval():
                    if sync.admit(item):
                        yield item
                case CellEnd() | KernelGone() | Failed():
                    yield _ended(item, "".join(seen), stopping, timeout, executor_stopping)
                    return
                case None if sync.due(time.monotonic()):
                    for released in sync.release():
                        yield released
                case Stop() | None if stopping is None:
                    stopping = self._stop_reason(item)
                    if stopping is not None:
                        grace_until = time.monotonic() + _GRACE[stopping]
                        sync.release()  # dropped: the pending ones are rejected next
                        await self.reject_pending()
                        await conn.interrupt()
                case None if time.monotonic() >= grace_until:
                    # The cell ignored the interrupt: only a new kernel frees it.
                    self.restart_reason = RESTART_AFTER_INTERRUPT
                    yield _unstoppable("".join(seen), stopping, timeout)
                    return

    def _stop_reason(self, item: Stop | None) -> str | None:
        """Why the running cell is interrupted now: the user stopped it or its time ran out; else ``None``."""
        if isinstance(item, Stop):
            return "cancelled"
        left = self.budget.remaining()
        return "timed_out" if left is not None and left <= 0 else None

    async def abandon(self, conn: KernelConnection | None, restart: Callable[[str], Awaitable[None]]) -> None:
        """Stop a cell nobody consumes any more: reject its approvals, interrupt, or restart the kernel.

        Raises:
            ExecutorError: The kernel had to be restarted and no new one started.
        """
        await self.reject_pending()
        if conn is not None and not conn.dead:
            await conn.interrupt()
            deadline = time.monotonic() + CANCEL_GRACE  # its consumer was cancelled
            while not isinstance(
                item := await next_item(self.queue, deadline - time.monotonic()), CellEnd | KernelGone
            ):
                if item is None:
                    await restart(RESTART_AFTER_INTERRUPT)
                    break
                if isinstance(item, ExecApproval):
                    await item.reject()


def _ended(
    item: CellEnd | KernelGone | Failed,
    seen: str,
    stopping: str | None,
    timeout: float | None,
    executor_stopping: Callable[[], bool],
) -> ExecResult:
    """The result of a cell that ended: it finished (maybe after an interrupt), its kernel died, or the
    executor failed under it (then its output so far and the reason)."""
    match item:
        case CellEnd():
            result = ExecResult(item.text, item.images, is_error=item.error is not None)
            return result if stopping is None else stopped_result(result, stopping, timeout)
        case KernelGone():
            return died_result(item, stopped=executor_stopping())
        case Failed(reason=reason):
            return ExecResult("\n".join([seen.strip("\n"), reason]).strip(), is_error=True)


def _unstoppable(seen: str, stopping: str | None, timeout: float | None) -> ExecResult:
    """The result of a cell that ignored the interrupt: its output so far; the kernel is restarted."""
    result = stopped_result(ExecResult(seen.strip("\n"), is_error=True), stopping, timeout)
    result.text += "\nThe cell did not stop, so the kernel is being restarted: all state is lost."
    return result


async def next_item(queue: asyncio.Queue[CellItem], wait: float | None) -> CellItem | None:
    """The next queue item, or None when ``wait`` seconds pass first."""
    if wait is not None and wait <= 0:
        return None if queue.empty() else queue.get_nowait()
    try:
        return await asyncio.wait_for(queue.get(), wait)
    except TimeoutError:
        return None


def stopped_result(result: ExecResult, why: str | None, timeout: float | None) -> ExecResult:
    """Mark ``result`` as ended by a timeout (``why == "timed_out"``) or by an interrupt."""
    result.is_error = True
    if why == "timed_out":
        result.timed_out = True
        note = (
            f"Execution timed out after {timeout:g}s (approval waits excluded); the kernel was interrupted."
        )
    else:
        result.cancelled = True
        note = "Execution interrupted."
    result.text = f"{result.text}\n{note}".strip()
    return result


def died_result(gone: KernelGone, *, stopped: bool) -> ExecResult:
    """The result of a cell whose kernel died (or whose executor was stopped) before it finished."""
    note = (
        "The executor was stopped."
        if stopped
        else f"The kernel died ({gone.reason}); a new kernel is started and all state was lost."
    )
    return ExecResult(f"{gone.text}\n{note}".strip(), gone.images, is_error=True, kernel_died=not stopped)


async def route_approval(
    request: ApprovalRequest, run: CellRun | None, approve_tool_calls: bool, approval_timeout: float | None
) -> None:
    """Answer a request of the kernel's approval channel: at once when it asks the user nothing, with a
    refusal when no cell runs that could ask, else by offering it to the running cell (``offer``)."""
    approval = exec_approval(request, approve_tool_calls)
    if approval is None:
        await request.accept()
    elif run is None or run.finished:
        await request.reject()
    else:
        run.offer(approval, request, approval_timeout)
