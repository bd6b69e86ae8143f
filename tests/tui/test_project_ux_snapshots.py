"""Snapshots of the @ file picker and the queue of messages typed during a turn (reviewed as pictures)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from freeact_tui.tui.widgets.blocks import ResponseBlock
from freeact_tui.tui.widgets.queued import QueuedMessages
from tests.helpers import SIZE, SnapCompare, at_picker, before, main, send
from tests.helpers import own_kernel_until as until
from tests.helpers import snapshot_app as make_app
from tests.scripted import Wait, script

pytestmark = [pytest.mark.kernel, pytest.mark.usefixtures("home_is_tmp")]  # ~/work in the welcome line


def test_file_picker_filtered(snap_compare: SnapCompare, tmp_path: Path) -> None:
    work = tmp_path / "work"
    for rel in (
        "README.md",
        "src/app.py",
        "src/widgets/conversation.py",
        "src/widgets/prompt.py",
        "tests/test_conversation.py",
        "docs/conventions.md",
        "node_modules/conv/index.js",
    ):
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text("x\n")
    assert snap_compare(make_app(script(["unused"]), tmp_path), terminal_size=SIZE, run_before=before(at_picker("conv")))


def test_queued_messages_during_a_turn(snap_compare: SnapCompare, tmp_path: Path) -> None:
    gate = asyncio.Event()  # never set: the turn stays running
    s = script(["Working on the first request", Wait(gate)])

    async def queue(pilot: Pilot[Any]) -> None:
        await send(pilot, "Summarise the data", wait_ready=False)
        await until(
            pilot, lambda: "first request" in "".join(b.text for b in main(pilot.app).query(ResponseBlock))
        )
        await send(pilot, "Then plot it as a bar chart", wait_ready=False)
        await send(
            pilot,
            "And write the plot to plot.png, with a title and axis labels for every series",
            wait_ready=False,
        )
        queued = main(pilot.app).query_one(QueuedMessages)
        await until(pilot, lambda: len(queued.items) == 2)
        pilot.app.clear_notifications()

    assert snap_compare(make_app(s, tmp_path), terminal_size=SIZE, run_before=before(queue))
