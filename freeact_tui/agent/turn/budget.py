"""The model requests of one turn: one count for the turn and the subagents it starts.

A subagent's requests are the parent turn's too: it may make at most what the turn has left, and what
it made is spent from the turn's budget (``max_model_requests``, or the caller's ``max_turns``). A
parent that delegates the same task again and again ends on the progress bound, and never spends
more than its one budget (a tester's run made 100 + 100 requests).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class RequestBudget:
    """The most model requests of a turn (its subagents' included), and how many were made."""

    total: int
    used: int = 0

    @property
    def left(self) -> int:
        return max(0, self.total - self.used)

    def spend(self, requests: int = 1) -> None:
        self.used += max(0, requests)


__all__ = ["RequestBudget"]
