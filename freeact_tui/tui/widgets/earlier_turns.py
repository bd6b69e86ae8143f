"""The earlier turns of a resumed session: kept as the items they are drawn from, drawn on demand.

A resumed log draws its last turns first (enough to fill the screen, back to the start of their
turn), so a long session's last turn is on the screen at once; the items before wait here and are
drawn and mounted a few turns at a time, newest first, when the user asks for them (Home, PageUp at
the top, or scrolling to the top). A split always falls on a turn's start (``is_start``: a prompt the
user sent), so a turn is never cut in two; a history without prompts splits by items.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from textual.containers import ScrollableContainer
from textual.widget import Widget
from textual.widgets import Static

EARLIER_ID = "earlier"
"""The id of the log's line that says how many earlier turns wait (and the key that shows them)."""

Draw = Callable[[list[Any]], Awaitable[list[Widget]]]
"""Makes the blocks of some items (not mounted), as a live turn would."""


def turn_start(items: Sequence[Any], at_least: int, is_start: Callable[[Any], bool]) -> int:
    """Where to split ``items`` so that the part after it holds at least ``at_least`` items and starts
    a turn (0: everything)."""
    cut = max(0, len(items) - max(1, at_least))
    while cut > 0 and not is_start(items[cut]):
        cut -= 1
    return cut


def count_turns(items: Sequence[Any], is_start: Callable[[Any], bool]) -> int:
    """The turns among ``items`` (a part before the first turn's start counts as one)."""
    return sum(map(is_start, items)) + (bool(items) and not is_start(items[0]))


class EarlierTurns:
    """The items of a resumed session not drawn yet, oldest first."""

    KEY = "Home"
    """The key that shows them (from the prompt or the log)."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self._is_start: Callable[[Any], bool] = lambda item: False
        self._draw: Draw | None = None
        self._lock = asyncio.Lock()  # one batch mounted at a time: each goes above the one before
        self.busy = False
        """A batch is being drawn or the view placed after it (its scrolling asks for no more)."""

    def __bool__(self) -> bool:
        return bool(self.items)

    def hold(self, items: Sequence[Any], at_least: int, is_start: Callable[[Any], bool], draw: Draw) -> list[Any]:
        """Keep all but the last turns of ``items`` (at least ``at_least`` items) to be drawn by ``draw``
        on demand; return the last turns, to draw now."""
        cut = turn_start(items, at_least, is_start)
        self.items, self._is_start, self._draw = list(items[:cut]), is_start, draw
        return list(items[cut:])

    def keep(self, items: Sequence[Any], is_start: Callable[[Any], bool], draw: Draw) -> None:
        """Keep all of ``items`` to be drawn by ``draw`` on demand (the turns after them are drawn)."""
        self.items, self._is_start, self._draw = list(items), is_start, draw

    def take(self, at_least: int) -> list[Any]:
        """The newest waiting turns (at least ``at_least`` items), no longer waiting."""
        cut = turn_start(self.items, at_least, self._is_start)
        taken, self.items = self.items[cut:], self.items[:cut]
        return taken

    def drop(self) -> int:
        """Give up every waiting item (the log pruned below them); return how many were waiting."""
        dropped, self.items = len(self.items), []
        return dropped

    def note(self) -> str:
        turns = count_turns(self.items, self._is_start)
        return f"⋯ {turns:,} earlier turn{'s' if turns != 1 else ''} — press {self.KEY} to show"

    async def mount_next(self, log: ScrollableContainer, at_least: int, first: Widget | None) -> None:
        """Draw the newest waiting turns (at least ``at_least`` items) and mount them above the log's
        blocks; the view stays on ``first`` (a block) where it was, else goes to the top."""
        async with self._lock:
            items = self.take(at_least)
            if not items or self._draw is None:
                return
            self.busy = True
            blocks = await self._draw(items)
            above = _first_block(log)
            offset = first.virtual_region.y - log.scroll_y if first is not None and first.is_attached else None
            if above is None:
                await log.mount_all(blocks)
            else:
                await log.mount_all(blocks, before=above)
            await self.show_note(log)
            log.call_after_refresh(self._place, log, first, offset)

    def _place(self, log: ScrollableContainer, block: Widget | None, offset: int | None) -> None:
        """After a batch: ``block`` ``offset`` rows from the top again, or the view at the top."""
        try:
            if block is None or offset is None or not block.is_attached:
                log.scroll_home(animate=False, immediate=True)  # (its scrolling: while busy)
            elif log.scroll_y < log.max_scroll_y:  # not when the user went back to the end meanwhile
                log.scroll_to(y=block.virtual_region.y - offset, animate=False, immediate=True)
        finally:
            self.busy = False

    async def show_note(self, log: Widget) -> None:
        """The line at the top of the log that says what waits (removed when nothing does)."""
        existing = log.query(f"#{EARLIER_ID}")
        if not self.items:
            await existing.remove()
        elif existing:
            existing.first(Static).update(self.note())
        else:
            await log.mount(Static(self.note(), id=EARLIER_ID, markup=False), before=0)


def _first_block(log: Widget) -> Widget | None:
    from freeact_tui.tui.widgets.blocks import Block

    return next((c for c in log.children if isinstance(c, Block)), None)


__all__ = ["EARLIER_ID", "Draw", "EarlierTurns", "count_turns", "turn_start"]
