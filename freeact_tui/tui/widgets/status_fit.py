"""Which status-bar labels to show when the line is too narrow for all of them: a stated priority order.

A label is shown whole or not at all; when the labels do not fit, the lowest-priority label is dropped
first, then the next lowest, until the rest fit. The order is a table, not a side effect of the order in
which the labels are laid out, so a new label takes a place in it rather than a place on the line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

PRIORITY: Mapping[str, int] = {
    # Safety first: what the user must know before approving anything stays longest.
    "skip": 120,  # approvals are off
    "approvals": 110,  # approvals wait for the user
    "readings": 100,  # readings of code no longer vouch for it
    "approval-mode": 90,  # approvals are relaxed (in-folder, plan …)
    "activity": 80,  # what the agent does now
    "kernel": 70,  # whether code can run
    "model": 60,
    "context": 50,  # how full the window is
    "session": 40,  # also reachable with F2
    "usage": 30,  # also in /cost
    "mode": 20,  # also in /status
    "protocol": 10,  # also in /status
}
"""Status-bar label (its id without ``status-``) → priority: a higher one is dropped later."""


def dropped(widths: Iterable[tuple[str, int]], room: int) -> frozenset[str]:
    """The labels to leave out so that the rest fit in ``room`` cells: the lowest-priority ones, as few as
    possible. ``widths`` gives each label's whole width; the last label left is kept even when it alone is
    wider than ``room`` (the terminal then cuts it: a bar is never blank while it has something to say)."""
    shown = sorted(widths, key=lambda item: PRIORITY[item[0]])
    total = sum(width for _, width in shown)
    out: set[str] = set()
    for name, width in shown[:-1]:
        if total <= room:
            break
        out.add(name)
        total -= width
    return frozenset(out)


__all__ = ["PRIORITY", "dropped"]
