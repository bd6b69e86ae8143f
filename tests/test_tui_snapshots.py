"""Snapshot tests of every state of the main screen and the approval dialog (reviewed as pictures).

Each app starts its own kernel (snapshots run the app in a fresh event loop), so these are kernel tests.
Determinism: a fixed session id, the kernel waited for until ready, the spinner frozen, no cursor blink.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from freeact_tui.config import Config
from freeact_tui.toolcalls import ShellAction
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.approval import ApprovalScreen
from freeact_tui.tui.screens.main import MainScreen
from freeact_tui.tui.widgets.blocks import ExecutionOutputBlock, ResponseBlock, ThoughtBlock
from freeact_tui.tui.widgets.prompt import PromptInput
from tests.scripted import Code, Script, Think, Wait, script

pytestmark = pytest.mark.kernel

SIZE = (120, 40)
SESSION_ID = "0b5848f8-89e8-4b08-a784-da134d221ea8"
SnapCompare = Callable[..., bool]


@pytest.fixture(autouse=True)
def home_is_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The welcome line shows the working dir as ``~/work`` (a temporary path would differ each run)."""
    monkeypatch.setenv("HOME", str(tmp_path))


def make_app(s: Script, tmp_path: Path) -> FreeactApp:
    (tmp_path / "work").mkdir(exist_ok=True)
    config = Config(sessions_dir=tmp_path / "sessions", working_dir=tmp_path / "work")
    return FreeactApp(config, model=s.model(), session_id=SESSION_ID)


async def until(pilot: Pilot[Any], condition: Callable[[], bool], limit: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.05)


def main(pilot: Pilot[Any]) -> MainScreen:
    app = pilot.app
    assert isinstance(app, FreeactApp)
    return app.main_screen


async def settle(pilot: Pilot[Any]) -> None:
    """Kernel ready, spinner frozen, cursor steady."""
    app = pilot.app
    assert isinstance(app, FreeactApp)
    app.animation_level = "none"
    await until(
        pilot, lambda: app.agent_ready and app.agent is not None and app.agent.kernel_state == "ready"
    )
    await until(pilot, lambda: "ready" in str(main(pilot).query_one("#status-kernel").render()))
    main(pilot).query_one(PromptInput).cursor_blink = False


async def send(pilot: Pilot[Any], text: str) -> None:
    prompt = main(pilot).query_one(PromptInput)
    prompt.load_text(text)
    prompt.focus()
    await pilot.press("enter")


def before(*steps: Callable[[Pilot[Any]], Awaitable[None]]) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        for step in steps:
            await step(pilot)
        await pilot.pause(0.2)

    return run


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
        await send(pilot, "What is the sum of 0..9?")
        await until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))
        await pilot.press("y")
        await until(pilot, lambda: not main(pilot).turn_running)

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
        await send(pilot, "Plan the analysis")
        await until(pilot, lambda: "Summarise" in "".join(b.text for b in main(pilot).query(ResponseBlock)))

    assert snap_compare(make_app(s, tmp_path), terminal_size=SIZE, run_before=before(turn))


def test_main_screen_execution_streaming(snap_compare: SnapCompare, tmp_path: Path) -> None:
    code = "import time\nfor i in range(3):\n    print(f'\\x1b[32mstep {i}\\x1b[0m done', flush=True)\ntime.sleep(60)"
    s = script(["Running the steps now."], [Code(code)])
    s.steps = [["Running the steps now.", Code(code)]]

    async def turn(pilot: Pilot[Any]) -> None:
        await send(pilot, "Run three steps")
        await until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))
        await pilot.press("y")
        await until(
            pilot, lambda: "step 2 done" in "".join(b.text for b in main(pilot).query(ExecutionOutputBlock))
        )

    assert snap_compare(make_app(s, tmp_path), terminal_size=SIZE, run_before=before(turn))


def test_approval_dialog_code_action(snap_compare: SnapCompare, tmp_path: Path) -> None:
    code = "import json\n\n# count words in a file\nwith open('notes.txt') as fh:\n    words = fh.read().split()\nprint(json.dumps({'words': len(words)}))"
    s = script(["I will count the words.", Code(code)])

    async def turn(pilot: Pilot[Any]) -> None:
        await send(pilot, "Count the words in notes.txt")
        await until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))

    assert snap_compare(make_app(s, tmp_path), terminal_size=SIZE, run_before=before(turn))


def test_approval_dialog_shell_command(snap_compare: SnapCompare, tmp_path: Path) -> None:
    s = script([Code("!mkdir -p build && touch build/out.txt")])

    async def turn(pilot: Pilot[Any]) -> None:
        await send(pilot, "Prepare the build dir")
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
        await send(pilot, "Clean up the repo")
        await until(pilot, lambda: "then check" in "".join(b.text for b in main(pilot).query(ThoughtBlock)))

    assert snap_compare(make_app(s, tmp_path), terminal_size=SIZE, run_before=before(turn))
