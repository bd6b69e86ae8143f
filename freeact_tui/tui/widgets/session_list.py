"""Past sessions as a list: title, last update as relative time, size and message count, current marked.

Public interface (usually used through ``SidePanel``):

- ``SessionList(clock=None)``: an ``OptionList``; ``clock`` returns the current time (tests fix it).
- ``set_sessions(sessions, current_id=None)``: show ``SessionInfo``-like objects (see ``SessionRow``),
  newest first as given; ``set_current(session_id)`` moves the "current" mark.
- Selecting a row (Enter/click) posts ``OptionList.OptionSelected`` whose ``option_id`` is the session id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Protocol

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from freeact_tui.text.safe import visible

Clock = Callable[[], datetime]


class SessionRow(Protocol):
    """The attributes of ``freeact_tui.store.SessionInfo`` this list reads."""

    @property
    def id(self) -> str: ...

    @property
    def title(self) -> str | None: ...

    @property
    def updated(self) -> datetime | str | float | None: ...

    @property
    def message_count(self) -> int: ...

    @property
    def size_bytes(self) -> int: ...


def _utc_now() -> datetime:
    return datetime.now(UTC)


def as_datetime(value: datetime | str | float | None) -> datetime | None:
    """Normalise a timestamp (datetime, ISO-8601 text with or without ``Z``, epoch seconds) to aware UTC."""
    if value is None:
        return None
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, int | float):
        moment = datetime.fromtimestamp(value, UTC)
    else:
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def relative_time(moment: datetime | None, now: datetime) -> str:
    """``just now``, ``5m ago``, ``3h ago``, ``2d ago``, then the date."""
    if moment is None:
        return "unknown time"
    seconds = (now - moment).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)}m ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h ago"
    if seconds < 30 * 86400:
        return f"{int(seconds // 86400)}d ago"
    return moment.strftime("%Y-%m-%d")


def format_size(size: int) -> str:
    """``512 B``, ``12 KB``, ``3.4 MB``."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size // 1024} KB"
    return f"{size / (1024 * 1024):.1f} MB"


class SessionList(OptionList):
    """Past sessions; the current one carries a mark."""

    DEFAULT_CSS = """
    SessionList {
        height: 1fr;
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
            clock: Returns the current time, for relative times.
            id: The widget id.
            classes: CSS classes.
        """
        super().__init__(id=id, classes=classes, markup=False, compact=True)
        self._clock: Clock = clock or _utc_now
        self._sessions: list[SessionRow] = []
        self.current_id: str | None = None

    def on_focus(self) -> None:
        # Show the cursor at once, so that Enter after Tab acts on a visible row.
        if self.highlighted is None and self.option_count:
            self.highlighted = 0

    @property
    def session_ids(self) -> list[str]:
        """The ids shown, in order."""
        return [s.id for s in self._sessions]

    def set_sessions(self, sessions: Iterable[SessionRow], current_id: str | None = None) -> None:
        """Replace the rows.

        Args:
            sessions: Sessions to show, in the order given (the store lists newest first).
            current_id: The session open now; keeps the previous mark when ``None``.
        """
        if current_id is not None:
            self.current_id = current_id
        highlighted = self.highlighted_option.id if self.highlighted_option else None
        # Duplicate ids would make OptionList raise; the first listing wins.
        unique: dict[str, SessionRow] = {}
        for session in sessions:
            unique.setdefault(session.id, session)
        self._sessions = list(unique.values())
        self._rebuild(highlighted)

    def set_current(self, session_id: str | None) -> None:
        """Mark ``session_id`` as the open session."""
        self.current_id = session_id
        self._rebuild(self.highlighted_option.id if self.highlighted_option else None)

    def _rebuild(self, highlighted: str | None) -> None:
        now = self._clock()
        self.set_options(Option(self._render_row(s, now), id=s.id) for s in self._sessions)
        ids = self.session_ids
        if highlighted in ids:
            self.highlighted = ids.index(highlighted)
        elif self.has_focus and ids:
            self.highlighted = 0

    def _render_row(self, session: SessionRow, now: datetime) -> Content:
        current = session.id == self.current_id
        title = (
            visible(" ".join((session.title or "").split()), multiline=False)
            or f"(untitled {session.id[:8]})"
        )
        meta = " · ".join(
            [
                relative_time(as_datetime(session.updated), now),
                f"{session.message_count} msg" + ("" if session.message_count == 1 else "s"),
                format_size(session.size_bytes),
            ]
        )
        parts: list[str | tuple[str, str]] = [
            ("● " if current else "  ", "bold $success"),
            (title, "bold $foreground" if current else "$foreground"),
            "\n  ",
            (meta, "$foreground-muted"),
        ]
        if current:
            parts += ["  ", ("current", "italic $success")]
        if getattr(session, "damaged", None):
            parts += ["  ", ("⚠ damaged", "bold $warning")]
        return Content.assemble(*parts)
