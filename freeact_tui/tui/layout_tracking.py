"""A screen that records every changed widget with each of its auto-sized ancestors (Textual 8.2.8).

Textual's ``Screen._on_layout`` walks up from a widget whose layout changed and should add each
widget to the set of its parent. It tests ``widget not in self._layout_widgets`` (the dict's keys)
instead of the parent's set; the ancestor it has just added as a key is then never added to *its*
parent's set. With ``layout: stream`` (the conversation log and its blocks) a parent whose set is
non-empty re-uses the cached placements of the children not in it. So when a response's first
paragraph is mounted in the same frame as another block of the log changes (the tool call's action
block, the approval dialog), the response block keeps its cached height of 0 and its text is not
drawn until something else lays the log out again. ``tests/fast/tui/test_layout_tracking.py`` reproduces it.
"""

from __future__ import annotations

from textual import messages
from textual.screen import Screen
from textual.widget import Widget


class LayoutTrackingScreen(Screen[None]):
    """``Screen`` with ``_on_layout`` adding each widget to its own parent's set of changed widgets."""

    async def _on_layout(self, message: messages.Layout) -> None:
        message.stop()
        message.prevent_default()
        layout_required = False
        widget: Widget = message.widget
        for ancestor in message.widget.ancestors:
            if not isinstance(ancestor, Widget):
                break
            changed = self._layout_widgets.setdefault(ancestor, set())
            if widget not in changed:
                changed.add(widget)
                layout_required = True
            if not ancestor.styles.auto_dimensions:
                break
            widget = ancestor
        if layout_required and not self._layout_required:
            self._layout_required = True
            self.check_idle()


__all__ = ["LayoutTrackingScreen"]
