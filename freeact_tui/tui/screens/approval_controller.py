"""The approval queue of a turn: requests that wait for the user, asked one dialog at a time."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from freeact_tui.events import ApprovalRequest, Decision
from freeact_tui.tui.screens.approval import ApprovalScreen

if TYPE_CHECKING:
    from textual.dom import DOMNode

T = TypeVar("T")

# The worker group of the dialog loop (one worker per controller at a time).
WORKER_GROUP = "approvals"


@dataclass(eq=False)
class _Waiting(Generic[T]):
    request: ApprovalRequest
    tag: T
    # Completes when the request is decided anywhere (dialog, rule, the agent's cancel or timeout).
    decided: asyncio.Future[Any] = field(repr=False)


class ApprovalController(Generic[T]):
    """Requests waiting for the user, in arrival order, shown one ``ApprovalScreen`` at a time.

    One managed worker of ``host`` shows the dialogs while the turn's events keep flowing. A request
    decided elsewhere while queued (a rule, the agent's timeout or cancel) leaves the queue at once,
    without a dialog; if its dialog is open, the dialog closes.

    Args:
        host: The node that runs the worker (its app pushes the dialogs); workers end with it.
        on_count: Called with the number of waiting requests whenever it changes (status bar).
        on_settled: Called once per request when it leaves the queue, with the tag it was added
            with; ``request.decision`` is ``None`` if it was dropped undecided (``clear``).
        on_asking: Called when a dialog opens.
    """

    def __init__(
        self,
        host: DOMNode,
        *,
        on_count: Callable[[int], object] | None = None,
        on_settled: Callable[[ApprovalRequest, T], object] | None = None,
        on_asking: Callable[[], object] | None = None,
    ) -> None:
        self._host = host
        self._on_count = on_count
        self._on_settled = on_settled
        self._on_asking = on_asking
        self._queue: deque[_Waiting[T]] = deque()
        self._answered = 0  # left the queue since it was last empty: the dialog's "n of m"
        self._running = False
        self._dialog: ApprovalScreen | None = None
        self._dialog_result: asyncio.Future[Decision | None] | None = None

    @property
    def count(self) -> int:
        """How many requests wait (the one in the open dialog included)."""
        return len(self._queue)

    @property
    def requests(self) -> list[ApprovalRequest]:
        """The waiting requests, in the order they are asked."""
        return [w.request for w in self._queue]

    @property
    def dialog(self) -> ApprovalScreen | None:
        """The open dialog, if any."""
        return self._dialog

    def add(self, request: ApprovalRequest, tag: T) -> None:
        """Queue an undecided request; its dialog shows after those queued before it."""
        decided = asyncio.ensure_future(request.wait())
        waiting = _Waiting(request, tag, decided)
        decided.add_done_callback(lambda _: self._decided_elsewhere(waiting))
        self._queue.append(waiting)
        self._changed()
        if not self._running:
            self._running = True
            self._host.run_worker(self._ask_all(), group=WORKER_GROUP, exit_on_error=False)

    def clear(self) -> None:
        """The turn ended: drop every waiting request and close the dialog."""
        dropped, self._queue = list(self._queue), deque()
        self._answered = 0  # a request of the next turn is "1 of n" even before this worker ends
        for waiting in dropped:
            self._settle(waiting)
        if self._dialog_result is not None and not self._dialog_result.done():
            self._dialog_result.set_result(None)
        self._changed()

    # -- the worker ---------------------------------------------------------------------------------------

    async def _ask_all(self) -> None:
        try:
            while self._queue:
                waiting = self._queue[0]
                request = waiting.request
                if not request.decided:
                    decision = await self._ask(waiting)
                    if decision is not None and not request.decided:
                        request.approve(
                            decision.approved,
                            remember=decision.remember,
                            pattern=decision.pattern,
                            instruction=decision.instruction,
                        )
                self._remove(waiting, answered=True)
        finally:
            # No await after this point: add() must see the loop gone exactly when it is.
            self._answered = 0
            self._running = False

    async def _ask(self, waiting: _Waiting[T]) -> Decision | None:
        result: asyncio.Future[Decision | None] = asyncio.get_running_loop().create_future()

        def done(decision: Decision | None) -> None:
            if not result.done():
                result.set_result(decision)

        if self._on_asking is not None:
            self._on_asking()
        dialog = ApprovalScreen(waiting.request, position=self._answered + 1, total=self._total())
        self._dialog, self._dialog_result = dialog, result
        try:
            await self._host.app.push_screen(dialog, callback=done)
            await asyncio.wait({result, waiting.decided}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._dialog = self._dialog_result = None
            done(None)
            if dialog.is_current:
                dialog.dismiss(None)
        return result.result()

    # -- bookkeeping ------------------------------------------------------------------------------------

    def _decided_elsewhere(self, waiting: _Waiting[T]) -> None:
        # The head is the worker's to remove (its dialog closes and the worker moves on).
        if waiting in self._queue and waiting is not self._queue[0]:
            self._remove(waiting, answered=False)

    def _remove(self, waiting: _Waiting[T], *, answered: bool) -> None:
        if waiting not in self._queue:
            return
        self._queue.remove(waiting)
        if answered:  # one asked; one decided elsewhere while queued just shrinks the total
            self._answered += 1
        self._settle(waiting)
        self._changed()

    def _settle(self, waiting: _Waiting[T]) -> None:
        waiting.decided.cancel()
        if self._on_settled is not None:
            self._on_settled(waiting.request, waiting.tag)

    def _total(self) -> int:
        return self._answered + len(self._queue)

    def _changed(self) -> None:
        if self._on_count is not None:
            self._on_count(len(self._queue))
        if self._dialog is not None:
            self._dialog.set_count(self._answered + 1, self._total())
