"""A long output opens whole in a pager (Alt+O, or v on the focused output) with search: / or Ctrl+F,
n/N, Esc. Real app, real kernel; the model is scripted. A snapshot at 80×24 (reviewed as a picture)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import TextArea

from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.approval import ApprovalScreen
from freeact_tui.tui.screens.main import MainScreen
from freeact_tui.tui.screens.pager import PagerScreen, matches
from freeact_tui.tui.widgets.blocks import AnsiLog
from tests import helpers
from tests.helpers import SnapCompare, before, main, send, snapshot_app
from tests.helpers import own_kernel_until as own_until
from tests.scripted import Code, script

ROWS_400 = "for i in range(400):\n    print(f'row {i}')"
executor = helpers.kernel


def test_matches_are_found_line_by_line_ignoring_case() -> None:
    assert matches("Row 1\nrow 10 row 1\nnone", "ROW 1") == [(0, 0, 5), (1, 0, 5), (1, 7, 12)]
    assert matches("aaaa", "aa") == [(0, 0, 2), (0, 2, 4)]  # no overlapping matches
    assert matches("text", "") == []


async def print_rows(pilot: Pilot[Any]) -> None:
    await send(pilot, "Print 400 rows", wait_ready=False)
    await own_until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))
    await pilot.pause(0.6)  # past the dialog's arming delay
    await pilot.press("y")
    await own_until(pilot, lambda: not main(pilot.app).turn_running)
    await own_until(pilot, lambda: main(pilot.app).conversation.query_one(AnsiLog).line_count == 400)


def pager(app: Any) -> PagerScreen:
    screen = app.screen
    assert isinstance(screen, PagerScreen)
    return screen


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_alt_o_opens_the_whole_output_and_search_steps_through_matches(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    app = helpers.make_app(
        script([Code(ROWS_400)], ["Printed 400 rows."]),
        tmp_path / "sessions",
        tmp_path,
        config={"subagent_pool_size": 0},
        executor=executor,
    )
    async with app.run_test(size=(100, 30)) as pilot:
        assert isinstance(app, FreeactApp)
        await helpers.ready(pilot)
        await print_rows(pilot)
        log = main(app).conversation.query_one(AnsiLog)
        assert "alt+o pager" in log.render_line(10).text  # the fold row says how

        await pilot.press("alt+o")
        await helpers.until(pilot, lambda: isinstance(app.screen, PagerScreen))
        view = pager(app).query_one(TextArea)
        assert view.document.line_count == 400 and view.document.get_line(399) == "row 399"
        assert "Output · 400 lines" in str(pager(app).query_one("#pager-title").render())

        await pilot.press("slash")
        for key in "row 39":
            await pilot.press("space" if key == " " else key)
        await pilot.press("enter")
        await pilot.pause()
        # row 39 and row 390 … row 399: eleven, the first at line 40
        assert pager(app).status.startswith("Match 1 of 11 for “row 39” (line 40)")
        assert view.selected_text == "row 39"
        assert view.scroll_offset.y > 0  # scrolled to it
        await pilot.press("n")
        assert pager(app).status.startswith("Match 2 of 11 for “row 39” (line 391)")
        await pilot.press("N", "N")
        assert pager(app).status.startswith("Match 11 of 11 for “row 39” (line 400)")  # wraps
        assert view.scroll_offset.y > 350

        await pilot.press("ctrl+f")
        for key in "nothing":
            await pilot.press(key)
        await pilot.press("enter")
        await pilot.pause()
        assert pager(app).status.startswith("No match for “nothing”")

        await pilot.press("escape")
        await helpers.until(pilot, lambda: isinstance(app.screen, MainScreen))

        log.focus()  # v on the focused output opens it too
        await pilot.press("v")
        await helpers.until(pilot, lambda: isinstance(app.screen, PagerScreen))
        await pilot.press("escape")
        await helpers.until(pilot, lambda: isinstance(app.screen, MainScreen))


@pytest.mark.kernel
@pytest.mark.usefixtures("home_is_tmp")
def test_pager_snapshot_80x24(snap_compare: SnapCompare, tmp_path: Path) -> None:
    s = script([Code(ROWS_400)], ["Printed 400 rows."])

    async def open_and_search(pilot: Pilot[Any]) -> None:
        await print_rows(pilot)
        await pilot.press("alt+o")
        await own_until(pilot, lambda: isinstance(pilot.app.screen, PagerScreen))
        await pilot.press("slash", "r", "o", "w", "space", "3", "9", "enter")
        await own_until(pilot, lambda: pager(pilot.app).status.startswith("Match 1 of 11"))
        await pilot.pause(0.2)

    assert snap_compare(snapshot_app(s, tmp_path), terminal_size=(80, 24), run_before=before(open_and_search))
