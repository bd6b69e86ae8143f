"""A resumed session's last turns, drawn before its whole history is read.

Opening a session used to read, check and replay every message of its file before the first frame
of its last turn (a 6,000-message session: a third of a second of validation alone, on the event
loop). Now the log first draws the end of the file: only its last lines are read and checked
(``store.history.read_tail``) and replayed as live; the agent loads the whole history after, off the
event loop, and nothing the model is sent comes from the tail. When the whole replay ends with exactly
the items drawn, the items before them wait as earlier turns (drawn on demand, ``EarlierTurns``); when
it does not (damage before the tail, a call never answered, a rewind, a ``!command`` numbered
differently), the log is drawn again from the whole, as it was before: the tail can only be faster,
never different.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from freeact_tui.tui.replay import ReplayItem, SubagentLoader, UserPrompt, replay_history
from freeact_tui.tui.widgets.earlier_turns import turn_start

if TYPE_CHECKING:
    from freeact_tui.store.sessions import Session

GROWTH = 4
"""How much more of the file is read when the lines read hold no turn's start with enough after it."""
ROUNDS = 4
"""Reads before giving up (then the whole history is drawn once it is loaded, as before)."""


def is_turn_start(item: ReplayItem) -> bool:
    """A turn starts with a prompt the user sent."""
    return isinstance(item, UserPrompt)


def tail_items(session: Session | None, at_least: int, load_subagent: SubagentLoader | None = None) -> list[ReplayItem]:
    """The last turns of the session's main history as replay items (at least ``at_least`` items, from a
    turn's start), read from the file's end only; empty when there is nothing to show or the end alone
    cannot say (then the whole history is drawn once loaded)."""
    from freeact_tui.store.history import read_tail

    if session is None or not session.exists():
        return []
    count = max(2 * at_least, 16)
    for _ in range(ROUNDS):
        messages = read_tail(session.history_path(), count)
        if not messages:
            return []
        items = replay_history(messages, load_subagent)
        cut = turn_start(items, at_least, is_turn_start)
        if len(messages) < count or cut > 0:  # the whole file, or a turn's start with enough after it
            return items[cut:]
        count *= GROWTH
    return []


def before_tail(past: Sequence[ReplayItem], drawn: Sequence[ReplayItem]) -> list[ReplayItem] | None:
    """The items of the whole replay ``past`` before those ``drawn`` from the tail; None when ``past``
    does not end with exactly them (the log must be drawn again from the whole)."""
    rest = len(past) - len(drawn)
    if not drawn or rest < 0 or list(past[rest:]) != list(drawn):
        return None
    return list(past[:rest])


__all__ = ["before_tail", "is_turn_start", "tail_items"]
