"""Long code-action output is folded to its head, "… N more lines" and its tail; Ctrl+O or a click opens it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.approval import ApprovalScreen
from freeact_tui.tui.widgets.blocks import AnsiLog, ExecutionOutputBlock
from tests import helpers
from tests.helpers import send, until
from tests.scripted import Code, Script, script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]

SIZE = (100, 30)
ROWS_400 = "for i in range(400):\n    print(f'row {i}')"
STREAM_60 = "import time\nfor i in range(60):\n    print(f'row {i}', flush=True)\n    time.sleep(0.05)"

executor = helpers.kernel


@pytest.fixture
def make_app(executor: KernelExecutor, tmp_path: Path) -> Callable[..., FreeactApp]:
    def make(s: Script) -> FreeactApp:
        config = {"subagent_pool_size": 0}
        return helpers.make_app(s, tmp_path / "sessions", tmp_path, config=config, executor=executor)

    return make


def shown(log: AnsiLog) -> list[str]:
    """The rows the output block draws, as text."""
    return [log.render_line(y).text.rstrip() for y in range(log.size.height)]


async def run_code(pilot: Pilot[None], app: FreeactApp) -> None:
    await send(pilot, "print the rows")
    await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
    await pilot.pause(0.6)  # past the dialog's arming delay
    await pilot.press("y")


async def test_long_output_shows_head_count_and_tail_and_ctrl_o_opens_it(
    make_app: Callable[..., FreeactApp],
) -> None:
    app = make_app(script([Code(ROWS_400)], ["Printed 400 rows."]))
    async with app.run_test(size=SIZE) as pilot:
        await run_code(pilot, app)
        await app.workers.wait_for_complete()
        await pilot.pause()
        block = app.main_screen.conversation.query_one(ExecutionOutputBlock)
        log = block.log_widget
        assert log.line_count == 400
        rows = shown(log)
        assert rows == [f"row {i}" for i in range(10)] + [
            "… 382 more lines (ctrl+o or click to expand · alt+o pager)"
        ] + [f"row {i}" for i in range(392, 400)]
        assert log.region.height == 19
        # The whole text is still the block's text (Alt+C, find and selection read it).
        assert block.text.splitlines() == [f"row {i}" for i in range(400)]

        await pilot.press("ctrl+o")
        await pilot.pause()
        assert not log.folded and log.region.height == 400
        assert shown(log) == [f"row {i}" for i in range(400)]

        await pilot.press("ctrl+o")
        await pilot.pause()
        assert log.folded and log.region.height == 19
        assert shown(log)[10].startswith("… 382 more lines")


async def test_a_click_on_the_fold_row_opens_the_output(make_app: Callable[..., FreeactApp]) -> None:
    app = make_app(script([Code(ROWS_400)], ["Printed 400 rows."]))
    async with app.run_test(size=SIZE) as pilot:
        await run_code(pilot, app)
        await app.workers.wait_for_complete()
        await pilot.pause()
        log = app.main_screen.conversation.query_one(AnsiLog)
        app.main_screen.conversation.scroll_to_widget(log, animate=False, top=True)
        await pilot.pause()
        assert log.folded
        # A click on a shown row of output does not open it; one on the fold row does.
        await pilot.click(log, offset=(2, 3))
        await pilot.pause()
        assert log.folded
        await pilot.click(log, offset=(2, 10))
        await pilot.pause()
        assert not log.folded and log.region.height == 400


async def test_streaming_output_stays_folded_with_the_newest_rows_as_its_tail(
    make_app: Callable[..., FreeactApp],
) -> None:
    app = make_app(script([Code(STREAM_60)], ["Done."]))
    async with app.run_test(size=SIZE) as pilot:
        await run_code(pilot, app)
        await until(pilot, lambda: bool(app.main_screen.conversation.query(ExecutionOutputBlock)))
        log = app.main_screen.conversation.query_one(AnsiLog)
        await until(pilot, lambda: 30 <= log.line_count < 55)
        await pilot.pause()
        count = log.line_count
        rows = shown(log)
        # Mid-stream: the head, the count of what is between, and the newest rows as the tail.
        assert rows[:10] == [f"row {i}" for i in range(10)]
        assert rows[10].startswith("… ") and "more lines" in rows[10]
        hidden = int(rows[10].split()[1])
        assert count - 18 - 2 <= hidden <= count - 18 + 2
        newest = int(rows[-1].split()[1])
        assert newest >= 27 and log.region.height == 19
        await app.workers.wait_for_complete()
        await pilot.pause()
        rows = shown(log)
        assert rows[10].startswith("… 42 more lines") and rows[-1] == "row 59"
        assert log.region.height == 19


async def test_short_output_is_shown_whole(make_app: Callable[..., FreeactApp]) -> None:
    app = make_app(script([Code("for i in range(20):\n    print(f'row {i}')")], ["ok"]))
    async with app.run_test(size=SIZE) as pilot:
        await run_code(pilot, app)
        await app.workers.wait_for_complete()
        await pilot.pause()
        log = app.main_screen.conversation.query_one(AnsiLog)
        assert shown(log) == [f"row {i}" for i in range(20)]
        assert not log.is_foldable
