"""Snapshots of a folded long output (head, "… N more lines", tail) at 80×24 and 120×40 (reviewed as pictures)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from freeact_tui.tui.screens.approval import ApprovalScreen
from freeact_tui.tui.widgets.blocks import AnsiLog
from tests.helpers import SnapCompare, before, main, send
from tests.helpers import own_kernel_until as until
from tests.helpers import snapshot_app as make_app
from tests.scripted import Code, script

pytestmark = [pytest.mark.kernel, pytest.mark.usefixtures("home_is_tmp")]

ROWS_400 = "for i in range(400):\n    print(f'row {i}')"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_long_output_is_folded(snap_compare: SnapCompare, tmp_path: Path, size: tuple[int, int]) -> None:
    s = script([Code(ROWS_400)], ["Printed 400 rows."])

    async def turn(pilot: Pilot[Any]) -> None:
        await send(pilot, "Print 400 rows", wait_ready=False)
        await until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))
        await pilot.pause(0.6)  # past the dialog's arming delay
        await pilot.press("y")
        await until(pilot, lambda: not main(pilot.app).turn_running)
        log = main(pilot.app).conversation
        # The fold row in view: the output's tail and the answer below it are at the end of the log.
        await until(pilot, lambda: log.query_one(AnsiLog).hidden_lines == 382)

    assert snap_compare(make_app(s, tmp_path), terminal_size=size, run_before=before(turn))
