"""Code in a scrolling view that always says how much of it is out of sight.

``CodeView(content)`` holds the code in a ``VerticalScroll`` and, under it, one line that appears
whenever the code does not fit: "⋯ 81 more lines below" (and how many are above once scrolled),
kept current as the user scrolls. Whoever places it gives it the rows it may use with ``fit(room)``;
the line is counted within them, so the view never grows past ``room``. Without ``fit`` the view is
sized by CSS (a ``max-height`` on its ``.code-scroll``) and the line shows while code is out of sight.

``mark_folds(content, folded)`` styles the fold marks of ``codeshow.fold`` apart (``FOLD_STYLE``), so
that a literal ``⋯`` in the code is never taken for a fold.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Label, Static

from freeact_tui.text.codeshow import Folded

FOLD_STYLE = "italic $text-warning"
"""How a fold mark (``⋯ 80 blank lines ⋯``) stands apart from the code around it."""


def mark_folds(content: Content, folded: Folded) -> Content:
    """``content`` (drawn from ``folded.text``) with its fold marks styled apart."""
    for start, end in folded.marks:
        content = content.stylize(FOLD_STYLE, start, end)
    return content


def _lines(count: int) -> str:
    return f"{count} more line" if count == 1 else f"{count} more lines"


def out_of_sight(above: int, below: int) -> str:
    """The line under the code when some of it is hidden ("" when all of it shows)."""
    if below and above:
        return f"⋯ {_lines(below)} below · {above} above (↑↓ PgUp PgDn scroll)"
    if below:
        return f"⋯ {_lines(below)} below (↓ PgDn scroll)"
    if above:
        return f"⋯ the end · {above} lines above (↑ PgUp scroll)"
    return ""


class _CodeScroll(VerticalScroll):
    """The scrolling part; tells its ``CodeView`` whenever what is in sight may have changed."""

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._report()

    def on_resize(self) -> None:
        self._report()

    def watch_virtual_size(self) -> None:  # the code was laid out (again): it may fit now, or no longer
        self._report()

    def _report(self) -> None:
        parent = self.parent
        if isinstance(parent, CodeView):
            self.call_after_refresh(parent.show_out_of_sight)


class CodeView(Vertical):
    """Code that scrolls, with a line saying how much of it is out of sight.

    Args:
        content: The code as drawn (see ``tool_call_content``).
        scroll_id / body_id: Ids of the scrolling part and of the code inside it.
    """

    DEFAULT_CSS = """
    CodeView {
        height: auto;
        & > .code-scroll { height: auto; }
        & > .code-scroll > .code-body { width: 1fr; }
        & > .code-more { width: 1fr; color: $text-warning; text-style: bold; display: none; }
        & > .code-more.-shown { display: block; }
    }
    """

    def __init__(
        self,
        content: Content,
        *,
        scroll_id: str | None = None,
        body_id: str | None = None,
        id: str | None = None,  # noqa: A002 (Textual's name)
    ) -> None:
        super().__init__(id=id)
        self._room: int | None = None
        self._content = content
        self._scroll_id = scroll_id
        self._body_id = body_id

    def compose(self) -> ComposeResult:
        with _CodeScroll(id=self._scroll_id, classes="code-scroll"):
            yield Static(self._content, id=self._body_id, classes="code-body", markup=False)
        yield Label("", classes="code-more")

    @property
    def scroll(self) -> VerticalScroll:
        return self.query_one(_CodeScroll)

    @property
    def hidden_rows(self) -> tuple[int, int]:
        """Rows of the code out of sight: (above, below)."""
        scroll = self.scroll
        above = round(scroll.scroll_y)
        below = max(0, scroll.virtual_size.height - scroll.scrollable_content_region.height - above)
        return above, below

    def fit(self, room: int) -> None:
        """Use at most ``room`` rows: all for the code when it fits, else one less and the line under it."""
        self._room = room
        self._fit()

    def _fit(self) -> None:
        scroll = self.scroll
        more = self.query_one(".code-more")
        if self._room is None:  # sized by CSS: the line shows while anything is out of sight
            more.set_class(scroll.max_scroll_y > 0, "-shown")
            return
        room = self._room
        over = scroll.virtual_size.height > room
        more.set_class(over, "-shown")
        height = max(1, room - 1) if over else room
        if scroll.styles.max_height is None or scroll.styles.max_height.value != height:
            scroll.styles.max_height = height

    def show_out_of_sight(self) -> None:
        """Bring the line under the code up to date with what is in sight."""
        if not self.is_attached:
            return
        self._fit()
        self.query_one(".code-more", Label).update(out_of_sight(*self.hidden_rows))


__all__ = ["FOLD_STYLE", "CodeView", "mark_folds", "out_of_sight"]
