"""The status bar at any width shows whole labels only and leaves out the lowest-priority ones first
(issue #43: at 80×24 the bar was 94+ columns wide and cut its end). The rule as generated cases, the real
widget under Pilot at 60, 80, 100 and 120 columns."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from textual.app import App, ComposeResult
from textual.widgets import Label

from freeact_tui.events import ContextUpdate, UsageUpdate
from freeact_tui.tui.widgets.status_bar import SPINNER_WIDTH, StatusBar
from freeact_tui.tui.widgets.status_fit import PRIORITY, dropped

NAMES = list(PRIORITY)


@given(
    st.lists(st.tuples(st.sampled_from(NAMES), st.integers(1, 60)), unique_by=lambda item: item[0]),
    st.integers(0, 200),
)
def test_dropped_labels_are_the_fewest_lowest_priority_ones(widths: list[tuple[str, int]], room: int) -> None:
    out = dropped(widths, room)
    kept = [(name, width) for name, width in widths if name not in out]
    assert out <= {name for name, _ in widths}
    if widths:
        assert kept, "the last label is kept"
    if len(kept) > 1:
        assert sum(width for _, width in kept) <= room, "what is shown fits"
    # Only lower priorities than every shown label are left out …
    if out and kept:
        assert max(PRIORITY[name] for name in out) < min(PRIORITY[name] for name, _ in kept)
    # … and no more than needed: the highest-priority label left out would not have fitted.
    if out:
        back = max(out, key=PRIORITY.__getitem__)
        assert sum(width for name, width in widths if name not in out or name == back) > room


def test_priorities_are_a_strict_order_over_every_label_of_the_bar() -> None:
    assert len(set(PRIORITY.values())) == len(PRIORITY)
    ids = {label.id for label in StatusBar().compose() if isinstance(label, Label)}
    assert ids == {f"status-{name}" for name in PRIORITY}


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield StatusBar()


def fill(bar: StatusBar, *, busy: bool) -> None:
    """The facts of a session; ``busy``: every label that can show at once (the widest bar)."""
    bar.set_session(
        model="anthropic:claude-sonnet-4-5", session_id="0b5848f8-89e8", mode="local", skip_permissions=busy
    )
    bar.set_protocol("tools")
    bar.set_kernel("busy" if busy else "ready")
    bar.set_usage(UsageUpdate(input_tokens=123456, output_tokens=6789, requests=9, cost_usd=1.2345))
    bar.set_context(ContextUpdate(used=150_000, window=200_000))
    if busy:
        bar.set_activity("waiting for the kernel")
        bar.set_waiting(2)
        bar.set_approval_mode("sandboxed-auto")
        bar.set_readings("a cell changed the interpreter")


@pytest.mark.parametrize("busy", [False, True], ids=["idle", "busy"])
@pytest.mark.parametrize("width", [60, 80, 100, 120])
async def test_every_shown_label_is_whole_and_the_bar_fits_the_screen(width: int, busy: bool) -> None:
    app = Host()
    async with app.run_test(size=(width, 24)) as pilot:
        bar = app.query_one(StatusBar)
        fill(bar, busy=busy)
        await pilot.pause()
        labels = {str(label.id).removeprefix("status-"): label for label in bar.query(Label)}
        present = {name for name, label in labels.items() if not label.has_class("-hidden")}
        shown = {name for name in present if labels[name].display}
        assert shown, "the bar says something"
        for name in shown:
            label = labels[name]
            assert label.region.width == label.get_content_width(label.size, app.size) + 2, f"{name} is cut"
            assert label.region.right <= width, f"{name} ends outside the screen"
        assert bar.virtual_size.width <= width
        assert sum(labels[n].region.width for n in shown) + SPINNER_WIDTH <= width
        left_out = present - shown
        if left_out:  # only lower priorities than anything shown
            assert max(PRIORITY[n] for n in left_out) < min(PRIORITY[n] for n in shown)
        if width >= 120 and not busy:
            assert left_out <= {"protocol"}  # a wide terminal shows (nearly) everything
        # Wider again: what was left out comes back.
        await pilot.resize_terminal(400, 24)
        await pilot.pause()
        assert all(labels[n].display for n in present)
