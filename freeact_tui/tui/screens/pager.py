"""A long output on a screen of its own: every line, scrollable, searchable.

Public interface: ``PagerScreen(title, text)`` is a ``Screen[None]``. Arrows, PgUp/PgDn, Home/End
scroll; ``/`` or Ctrl+F opens the search line (Enter searches, case-insensitive); n and N go to the
next and previous match (wrapping); Esc closes the search line, then the pager. ``matches(text, query)``
is the search itself: the (line, start, end) of each match.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, Label, Static, TextArea
from textual.widgets.text_area import Selection

from freeact_tui.text.safe import visible
from freeact_tui.tui.widgets.blocks.base import Block
from freeact_tui.tui.widgets.blocks.output import ExecutionOutputBlock
from freeact_tui.tui.widgets.blocks.tool_output import ToolOutputBlock

Match = tuple[int, int, int]
"""A match: line, first column, column after it."""

_KEYS = "/ or Ctrl+F search · n/N next/previous match · Esc closes"


def matches(text: str, query: str) -> list[Match]:
    """Where ``query`` occurs in ``text`` (case-insensitive), line by line, in order."""
    needle = query.casefold()
    if not needle:
        return []
    found: list[Match] = []
    for number, line in enumerate(text.split("\n")):
        hay = line.casefold()
        start = hay.find(needle)
        while start >= 0:
            found.append((number, start, start + len(needle)))
            start = hay.find(needle, start + max(len(needle), 1))
    return found


def output_to_page(log: Widget, focused: Widget | None, found: Widget | None) -> tuple[str, str] | None:
    """The (title, text) of the output to open: the focused one, the one the find bar shows, else
    the last folded (long) one in ``log``, else the last one; None when ``log`` has no output."""
    outputs = [b for b in log.query("ExecutionOutputBlock, ToolOutputBlock") if isinstance(b, Block)]
    chosen = next(
        (b for b in outputs if focused is not None and (focused is b or b in focused.ancestors)), None
    )
    chosen = chosen or next(
        (b for b in outputs if found is not None and (found is b or found in b.ancestors)), None
    )
    folded = [b for b in outputs if isinstance(b, ExecutionOutputBlock) and b.log_widget.is_foldable]
    chosen = chosen or (folded[-1] if folded else outputs[-1] if outputs else None)
    if isinstance(chosen, ExecutionOutputBlock):
        return ("Error output" if chosen.is_error else "Output"), chosen.text
    if isinstance(chosen, ToolOutputBlock):
        return chosen.kind, chosen.content
    return None


class PagerScreen(Screen[None]):
    """The whole of one output, with search."""

    CSS_PATH = "pager.tcss"
    HELP_GROUP = "Pager"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "find", "Search", id="pager.find", key_display="/"),
        # priority: the text view binds Ctrl+F itself (delete a word, which a read-only view never does)
        Binding("ctrl+f", "find", "Search", id="pager.find_ctrl", show=False, priority=True),
        Binding("n", "next_match(1)", "Next match", id="pager.next"),
        Binding("N", "next_match(-1)", "Previous match", id="pager.previous", key_display="N"),
        Binding("escape", "close", "Close", id="pager.close"),
        Binding("q", "close", "Close", id="pager.quit", show=False),
    ]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text = visible(title, multiline=False)
        self.text = visible(text)  # control characters shown, never sent to the terminal
        self.query_text = ""
        self.found: list[Match] = []
        self.current = -1

    def compose(self) -> ComposeResult:
        lines = self.text.count("\n") + 1
        yield Label(f"{self.title_text} · {lines} line{'s' * (lines != 1)}", id="pager-title", markup=False)
        yield TextArea(
            self.text,
            read_only=True,
            show_cursor=False,
            show_line_numbers=True,
            soft_wrap=False,
            id="pager-text",
        )
        yield Input(placeholder="Search (Enter finds, Esc closes)", id="pager-find")
        yield Static(_KEYS, id="pager-status", markup=False)

    def on_mount(self) -> None:
        self.query_one("#pager-text", TextArea).focus()

    @property
    def view(self) -> TextArea:
        return self.query_one("#pager-text", TextArea)

    @property
    def status(self) -> str:
        """What the status line says now."""
        return str(self.query_one("#pager-status", Static).render())

    def action_find(self) -> None:
        find = self.query_one("#pager-find", Input)
        find.add_class("-open")
        find.value = self.query_text
        find.focus()

    @on(Input.Submitted, "#pager-find")
    def _search(self, event: Input.Submitted) -> None:
        event.stop()
        self._close_find()
        self.search(event.value)

    def search(self, query: str) -> None:
        """Find ``query`` and show the first match at or after the top of the view."""
        self.query_text = query
        self.found = matches(self.text, query)
        if not self.found:
            self.current = -1
            self._say(f"No match for “{query}” · {_KEYS}" if query else _KEYS)
            return
        top = self.view.scroll_offset.y
        self.current = next((n for n, m in enumerate(self.found) if m[0] >= top), 0)
        self._show()

    def action_next_match(self, step: int) -> None:
        if not self.found:
            self._say(
                f"No search yet · {_KEYS}" if not self.query_text else f"No match for “{self.query_text}”"
            )
            return
        self.current = (self.current + step) % len(self.found)
        self._show()

    def action_close(self) -> None:
        find = self.query_one("#pager-find", Input)
        if find.has_class("-open"):
            self._close_find()
            return
        self.dismiss(None)

    def _close_find(self) -> None:
        self.query_one("#pager-find", Input).remove_class("-open")
        self.view.focus()

    def _show(self) -> None:
        line, start, end = self.found[self.current]
        view = self.view
        view.selection = Selection((line, start), (line, end))
        # No cursor in a read-only view, so scroll by hand: the line in the middle, the match in view.
        width = max(view.scrollable_content_region.width - view.gutter_width, 1)
        x = 0 if end <= width else end - width + 2
        view.scroll_to(
            x=x, y=max(line - view.scrollable_content_region.height // 2, 0), animate=False, immediate=True
        )
        self._say(
            f"Match {self.current + 1} of {len(self.found)} for “{self.query_text}” (line {line + 1}) · "
            "n/N next/previous · Esc closes"
        )

    def _say(self, text: str) -> None:
        self.query_one("#pager-status", Static).update(visible(text, multiline=False))


__all__ = ["Match", "PagerScreen", "matches", "output_to_page"]
