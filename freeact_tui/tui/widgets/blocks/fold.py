"""The one collapsible of the log: it scrolls into view only when the user opens it by hand.

Textual's ``Collapsible`` scrolls itself into view on every change of ``collapsed``. In the log that
moved the reader's place whenever the app folded a block (a thought folded at the end of a long
answer scrolled the log back up to it) or unfolded many at once (Ctrl+O: each opened block pulled the
view to itself). Here only a toggle of its title (a click, Enter) scrolls it into view.
"""

from __future__ import annotations

from textual.widgets import Collapsible
from textual.widgets._collapsible import CollapsibleTitle


class LogFold(Collapsible):
    """A ``Collapsible`` that stays where it is unless the user toggles it."""

    def _on_collapsible_title_toggle(self, event: CollapsibleTitle.Toggle) -> None:
        event.stop()
        event.prevent_default()  # Collapsible's own handler would toggle it back
        self.collapsed = not self.collapsed
        if not self.collapsed:
            self.call_after_refresh(self.scroll_visible)  # the user opened it: show what opened

    def _watch_collapsed(self, collapsed: bool) -> None:
        self._update_collapsed(collapsed)
        self.post_message(self.Collapsed(self) if collapsed else self.Expanded(self))
