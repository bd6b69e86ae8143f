"""The side panel (docked right): the session's subagents, live, and past sessions.

Public interface:

- ``SidePanel(clock=None, id="side-panel")``: mount it in the main screen; toggle it with ``toggle()``
  (or set ``display``) from an app binding. ``clock`` returns the current time (tests fix it).
- ``update_subagent(event: SubagentStatus)``: feed every ``SubagentStatus`` event (from the turn's
  stream and from ``agent.subscribe``); ``clear_subagents()`` when a new session starts.
- ``set_sessions(sessions, current_id=None)``: ``SessionStore.list()`` output; ``set_current_session(id)``.
- Messages (bubble to the screen/app):
  ``SidePanel.SubagentSelected(agent_id, corr_id)`` (handler ``on_side_panel_subagent_selected``) when a
  subagent row is chosen (Enter/click) — scroll to its activity; ``SidePanel.SessionChosen(session_id)``
  (handler ``on_side_panel_session_chosen``) when a session row is chosen — resume it (ignore the
  current one). Tab moves between the two lists, arrows within one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Label, OptionList, Static

from freeact_tui.tui.widgets.session_list import Clock, SessionList, SessionRow
from freeact_tui.tui.widgets.subagent_list import SubagentList

if TYPE_CHECKING:  # annotations only: the events load with the agent, after the first frame
    from freeact_tui.events import SubagentStatus


class SidePanel(Vertical):
    """Subagents and sessions, one titled list each."""

    DEFAULT_CSS = """
    SidePanel {
        dock: right;
        width: 35%;  /* at 80 columns the log keeps most of the width */
        min-width: 26;
        max-width: 44;
        height: 1fr;
        background: $surface;
        border-left: tall $panel;
        padding: 0 0 0 1;
    }
    SidePanel .side-panel-title {
        width: 100%;
        color: $primary;
        text-style: bold;
        padding: 0 0 0 1;
        background: $panel;
        margin-bottom: 0;
    }
    SidePanel #sessions-title {
        margin-top: 1;
    }
    SidePanel .side-panel-empty {
        color: $text-muted;
        padding: 0 1;
    }
    SidePanel OptionList:focus {
        background-tint: $foreground 3%;
    }
    """

    class SubagentSelected(Message):
        """A subagent row was chosen; the app should show that subagent's activity."""

        def __init__(self, agent_id: str, corr_id: str) -> None:
            """Args: agent_id: the subagent; corr_id: the parent's ``subagent_task`` call id."""
            super().__init__()
            self.agent_id = agent_id
            self.corr_id = corr_id

    class SessionChosen(Message):
        """A session row was chosen; the app should resume it."""

        def __init__(self, session_id: str) -> None:
            """Args: session_id: the chosen session."""
            super().__init__()
            self.session_id = session_id

    def __init__(
        self, clock: Clock | None = None, *, id: str | None = "side-panel", classes: str | None = None
    ) -> None:
        """Build the panel.

        Args:
            clock: Returns the current time (elapsed and relative times); the system clock by default.
            id: The widget id.
            classes: CSS classes.
        """
        super().__init__(id=id, classes=classes)
        self._clock = clock
        self._built = False

    def compose(self) -> ComposeResult:
        # The panel starts hidden: its lists are built when it is first shown or fed, not for the
        # app's first frame (their styling and layout cost a tenth of it).
        if self.display:
            yield from self._children()
            self._built = True

    def _children(self) -> ComposeResult:
        yield Label("Subagents", id="subagents-title", classes="side-panel-title")
        yield Static("No subagents in this session.", id="subagents-empty", classes="side-panel-empty")
        yield SubagentList(self._clock, id="subagent-list")
        yield Label("Sessions", id="sessions-title", classes="side-panel-title")
        yield Static("No saved sessions yet.", id="sessions-empty", classes="side-panel-empty")
        yield SessionList(self._clock, id="session-list")

    def _build(self) -> None:
        """Mount the lists now (once); they are in the DOM, and found by queries, at once."""
        if self._built:
            return
        self._built = True
        self.mount_all(self._children())
        self._sync_placeholders()

    def on_mount(self) -> None:
        if self._built:
            self._sync_placeholders()

    @property
    def display(self) -> bool:
        return Vertical.display.fget(self)  # type: ignore[attr-defined]

    @display.setter
    def display(self, value: bool | str) -> None:
        Vertical.display.fset(self, value)  # type: ignore[attr-defined]
        if self.display and self.is_attached:
            self._build()  # shown: its lists are needed now

    @property
    def subagents(self) -> SubagentList:
        """The subagent list widget."""
        self._build()
        return self.query_one(SubagentList)

    @property
    def sessions(self) -> SessionList:
        """The session list widget."""
        self._build()
        return self.query_one(SessionList)

    def update_subagent(self, event: SubagentStatus) -> None:
        """Add or update a subagent row.

        Args:
            event: A ``SubagentStatus`` event.
        """
        self.subagents.update_subagent(event)
        self._sync_placeholders()

    def clear_subagents(self) -> None:
        """Forget all subagents (a new session started)."""
        if not self._built:
            return  # none were shown
        self.subagents.clear_subagents()
        self._sync_placeholders()

    def set_sessions(self, sessions: Iterable[SessionRow], current_id: str | None = None) -> None:
        """Show past sessions.

        Args:
            sessions: ``SessionInfo`` objects, newest first.
            current_id: The open session, marked in the list.
        """
        self.sessions.set_sessions(sessions, current_id)
        self._sync_placeholders()

    def set_current_session(self, session_id: str | None) -> None:
        """Move the "current" mark to ``session_id``."""
        self.sessions.set_current(session_id)

    def toggle(self) -> None:
        """Show or hide the panel."""
        self.display = not self.display

    def _sync_placeholders(self) -> None:
        subagents, sessions = self.subagents, self.sessions
        subagents.display = subagents.option_count > 0
        self.query_one("#subagents-empty").display = subagents.option_count == 0
        sessions.display = sessions.option_count > 0
        self.query_one("#sessions-empty").display = sessions.option_count == 0
        running = sum(1 for e in subagents.entries if e.state in ("running", "waiting"))
        title = f"Subagents ({running} active)" if running else "Subagents"
        self.query_one("#subagents-title", Label).update(title)
        count = sessions.option_count
        self.query_one("#sessions-title", Label).update(f"Sessions ({count})" if count else "Sessions")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        option_id = event.option_id
        if option_id is None:
            return
        if isinstance(event.option_list, SubagentList):
            entry = event.option_list.entry(option_id)
            self.post_message(self.SubagentSelected(option_id, entry.corr_id if entry else ""))
        elif isinstance(event.option_list, SessionList):
            self.post_message(self.SessionChosen(option_id))
