"""Snapshot tests of every state of the main screen and the approval dialog (reviewed as pictures).

Each app starts its own kernel (snapshots run the app in a fresh event loop), so these are kernel tests.
Determinism: a fixed session id, the kernel waited for until ready, the spinner frozen, no cursor blink.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from freeact_tui.toolcalls import ShellAction
from freeact_tui.tui.screens.approval import ApprovalScreen
from freeact_tui.tui.widgets.blocks import ExecutionOutputBlock, ResponseBlock, ThoughtBlock
from tests.helpers import SIZE, SnapCompare, before, main, send
from tests.helpers import own_kernel_until as until
from tests.helpers import snapshot_app as make_app
from tests.scripted import Code, Think, Wait, script

pytestmark = [pytest.mark.kernel, pytest.mark.usefixtures("home_is_tmp")]  # ~/work in the welcome line


def test_main_screen_idle_after_a_turn(snap_compare: SnapCompare, tmp_path: Path) -> None:
    s = script(
        [
            Think("The user wants a sum. I will compute it in the kernel."),
            "Let me compute that.",
            Code("print(sum(range(10)))"),
        ],
        ["The sum of 0 to 9 is **45**.\n\n```python\nsum(range(10))\n```"],
    )

    async def turn(pilot: Pilot[Any]) -> None:
        await send(pilot, "What is the sum of 0..9?", wait_ready=False)
        await until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))
        await pilot.press("y")
        await until(pilot, lambda: not main(pilot.app).turn_running)

    assert snap_compare(make_app(s, tmp_path), terminal_size=SIZE, run_before=before(turn))


def test_main_screen_mid_stream(snap_compare: SnapCompare, tmp_path: Path) -> None:
    gate = asyncio.Event()  # never set: the model stream stays open at a known point
    s = script(
        [
            Think("Reading the request carefully, then planning."),
            "Here is the plan:\n\n1. Look at the data\n2. Summarise",
            Wait(gate),
        ]
    )

    async def turn(pilot: Pilot[Any]) -> None:
        await send(pilot, "Plan the analysis", wait_ready=False)
        await until(
            pilot, lambda: "Summarise" in "".join(b.text for b in main(pilot.app).query(ResponseBlock))
        )

    assert snap_compare(make_app(s, tmp_path), terminal_size=SIZE, run_before=before(turn))


def test_main_screen_execution_streaming(snap_compare: SnapCompare, tmp_path: Path) -> None:
    code = "import time\nfor i in range(3):\n    print(f'\\x1b[32mstep {i}\\x1b[0m done', flush=True)\ntime.sleep(60)"
    s = script(["Running the steps now."], [Code(code)])
    s.steps = [["Running the steps now.", Code(code)]]

    async def turn(pilot: Pilot[Any]) -> None:
        await send(pilot, "Run three steps", wait_ready=False)
        await until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))
        await pilot.press("y")
        await until(
            pilot,
            lambda: "step 2 done" in "".join(b.text for b in main(pilot.app).query(ExecutionOutputBlock)),
        )

    assert snap_compare(make_app(s, tmp_path), terminal_size=SIZE, run_before=before(turn))


def test_approval_dialog_code_action(snap_compare: SnapCompare, tmp_path: Path) -> None:
    code = "import json\n\n# count words in a file\nwith open('notes.txt') as fh:\n    words = fh.read().split()\nprint(json.dumps({'words': len(words)}))"
    s = script(["I will count the words.", Code(code)])

    async def turn(pilot: Pilot[Any]) -> None:
        await send(pilot, "Count the words in notes.txt", wait_ready=False)
        await until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))

    assert snap_compare(make_app(s, tmp_path), terminal_size=SIZE, run_before=before(turn))


def test_approval_dialog_shell_command(snap_compare: SnapCompare, tmp_path: Path) -> None:
    s = script([Code("!mkdir -p build && touch build/out.txt")])

    async def turn(pilot: Pilot[Any]) -> None:
        await send(pilot, "Prepare the build dir", wait_ready=False)
        await until(
            pilot,
            lambda: (
                isinstance(pilot.app.screen, ApprovalScreen)
                and isinstance(pilot.app.screen.request.tool_call, ShellAction)
            ),
        )

    assert snap_compare(make_app(s, tmp_path), terminal_size=SIZE, run_before=before(turn))


def test_main_screen_thought_streaming(snap_compare: SnapCompare, tmp_path: Path) -> None:
    """A thought still streaming: expanded, dimmed, nothing below it yet."""
    gate = asyncio.Event()
    s = script(
        [
            Think(
                "The user asks for a **cleanup plan**. First I should list the files,\n"
                "then check which are generated, then"
            ),
            Wait(gate),
        ]
    )

    async def turn(pilot: Pilot[Any]) -> None:
        await send(pilot, "Clean up the repo", wait_ready=False)
        await until(
            pilot, lambda: "then check" in "".join(b.text for b in main(pilot.app).query(ThoughtBlock))
        )

    assert snap_compare(make_app(s, tmp_path), terminal_size=SIZE, run_before=before(turn))
