"""A live list of the session's subagents: id, state, elapsed time (ticking while active), task.

Public interface (usually used through ``SidePanel``):

- ``SubagentList(clock=None)``: an ``OptionList``; ``clock`` returns the current time (inject a fixed
  one in tests so that elapsed times are deterministic).
- ``update_subagent(event: SubagentStatus)``: add or update the row of ``event.agent_id``.
- ``entry(agent_id) -> SubagentEntry | None``, ``entries``, ``clear_subagents()``; ``refresh_elapsed()``
  redraws the elapsed times (a one-second timer calls it while mounted).
- Selecting a row (Enter/click) posts ``OptionList.OptionSelected`` whose ``option_id`` is the agent id.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from freeact_tui.text.safe import one_line_summary

if TYPE_CHECKING:  # annotations only: the events load with the agent, after the first frame
    from freeact_tui.events import SubagentState, SubagentStatus

Clock = Callable[[], datetime]

_ACTIVE: frozenset[SubagentState] = frozenset({"running", "waiting"})
_FINISHED: frozenset[SubagentState] = frozenset({"done", "failed", "cancelled"})

# (glyph, label, style) per state; styles only use theme variables.
_LOOK: dict[SubagentState, tuple[str, str, str]] = {
    "queued": ("○", "queued", "$foreground-muted"),
    "running": ("●", "running", "bold $primary"),
    "waiting": ("◆", "waiting for approval", "bold $warning"),
    "done": ("✓", "done", "$success"),
    "failed": ("✗", "failed", "bold $error"),
    "cancelled": ("⊘", "cancelled", "$foreground-muted"),
}

_TASK_CHARS = 72


def utc_now() -> datetime:
    """The current time, timezone-aware (the default clock)."""
    return datetime.now(UTC)


def format_elapsed(seconds: float) -> str:
    """``7s``, ``1m 05s``, ``2h 03m``."""
    total = max(0, int(seconds))
    if total < 60:
        return f"{total}s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


@dataclass
class SubagentEntry:
    """What the list knows about one subagent."""

    agent_id: str
    corr_id: str
    task: str
    state: SubagentState
    detail: str = ""
    started: datetime | None = None
    ended: datetime | None = None

    def elapsed(self, now: datetime) -> float | None:
        """Seconds since it started running (frozen once finished), or ``None`` if it never ran."""
        if self.started is None:
            return None
        return ((self.ended or now) - self.started).total_seconds()


def _short_task(task: str) -> str:
    return one_line_summary(task, _TASK_CHARS)


class SubagentList(OptionList):
    """Subagents of the session, newest last; elapsed times tick once a second while any is active."""

    DEFAULT_CSS = """
    SubagentList {
        height: auto;
        max-height: 50%;
        background: transparent;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(
        self, clock: Clock | None = None, *, id: str | None = None, classes: str | None = None
    ) -> None:
        """Build an empty list.

        Args:
            clock: Returns the current time; ``utc_now`` by default.
            id: The widget id.
            classes: CSS classes.
        """
        super().__init__(id=id, classes=classes, markup=False, compact=True)
        self._clock: Clock = clock or utc_now
        self._entries: dict[str, SubagentEntry] = {}

    @property
    def entries(self) -> list[SubagentEntry]:
        """All known subagents in the order they appeared."""
        return list(self._entries.values())

    def entry(self, agent_id: str) -> SubagentEntry | None:
        """The entry of ``agent_id``, if known."""
        return self._entries.get(agent_id)

    def on_focus(self) -> None:
        # Show the cursor at once, so that Enter after Tab acts on a visible row.
        if self.highlighted is None and self.option_count:
            self.highlighted = 0

    def on_mount(self) -> None:
        self.set_interval(1.0, self.refresh_elapsed, name="subagent-elapsed")

    def update_subagent(self, event: SubagentStatus) -> None:
        """Add or update a subagent's row from a status event.

        Args:
            event: The status; ``agent_id`` names the subagent, ``corr_id`` the parent's call.
        """
        now = self._clock()
        entry = self._entries.get(event.agent_id)
        is_new = entry is None
        if entry is None:
            entry = SubagentEntry(event.agent_id, event.corr_id, event.task, event.state, event.detail)
            self._entries[event.agent_id] = entry
        else:
            entry.state = event.state
            entry.detail = event.detail
            entry.task = event.task or entry.task
            entry.corr_id = event.corr_id or entry.corr_id
        if event.state in _ACTIVE and entry.started is None:
            entry.started = now
        if event.state in _FINISHED:
            entry.ended = entry.ended or now
        elif entry.ended is not None:
            entry.ended = None  # resumed after a finish: keep counting
        prompt = self._render_entry(entry, now)
        if is_new:
            self.add_option(Option(prompt, id=entry.agent_id))
            if self.has_focus and self.highlighted is None:
                self.highlighted = 0
        else:
            self.replace_option_prompt(entry.agent_id, prompt)

    def clear_subagents(self) -> None:
        """Forget every subagent (a new session started)."""
        self._entries.clear()
        self.clear_options()

    def _render_entry(self, entry: SubagentEntry, now: datetime) -> Content:
        glyph, label, style = _LOOK.get(entry.state, ("?", entry.state, "$foreground"))
        elapsed = entry.elapsed(now)
        parts: list[str | tuple[str, str]] = [
            (glyph, style),
            " ",
            (entry.agent_id, "bold"),
            "  ",
            (label, style),
        ]
        if elapsed is not None:
            parts += ["  ", (format_elapsed(elapsed), "$foreground-muted")]
        parts += ["\n  ", (_short_task(entry.task) or "(no task)", "$foreground-muted")]
        if entry.detail and entry.state == "failed":
            parts += ["\n  ", (_short_task(entry.detail), "$error")]
        return Content.assemble(*parts)

    def refresh_elapsed(self) -> None:
        """Redraw the elapsed time of active subagents (the one-second timer calls this)."""
        now = self._clock()
        for entry in self._entries.values():
            if entry.state in _ACTIVE:
                self.replace_option_prompt(entry.agent_id, self._render_entry(entry, now))
