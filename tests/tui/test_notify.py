"""Notifications while the terminal is not focused: a bell and OSC 9/777, never while it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from freeact_tui.project.config import Config
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.notify import Notifier, desktop_sequences
from tests.scripted import Code, Script


def test_sequences_are_osc_9_and_777_and_pass_through_tmux() -> None:
    plain = desktop_sequences("Approval needed: rm x;\x1b]evil\x07")
    assert (
        plain
        == "\x1b]9;freeact: Approval needed: rm x]evil\x07\x1b]777;notify;freeact;Approval needed: rm x]evil\x07"
    )
    wrapped = desktop_sequences("done", tmux=True)
    assert wrapped.startswith("\x1bPtmux;\x1b\x1b]9;freeact: done\x07\x1b\\")
    assert wrapped.count("\x1bPtmux;") == 2


def test_only_when_unfocused_and_for_long_turns() -> None:
    out: list[str] = []
    focused = [True]
    n = Notifier(write=out.append, focused=lambda: focused[0], after=10, tmux=False)
    n.approval_waiting("x")
    assert out == []
    focused[0] = False
    n.turn_finished(3, "The turn ended")  # short: not worth a notification
    n.approval_waiting("[main] print(1)")
    n.turn_finished(12, "The turn ended")
    assert n.sent == ["Approval needed: [main] print(1)", "The turn ended after 12 s"]
    assert out[0].startswith("\x07\x1b]9;freeact: Approval needed")
    quiet = Notifier(write=out.append, focused=lambda: False, bell=False, desktop=False)
    quiet.approval_waiting("y")
    assert quiet.sent == []


@pytest.mark.kernel
async def test_the_app_notifies_a_waiting_approval_and_a_long_turn(tmp_path: Path) -> None:
    s = Script([[Code("print('hi')")], ["done"]])
    config = Config(sessions_dir=tmp_path / "s", working_dir=tmp_path, subagent_pool_size=0, notify_after=0)
    app = FreeactApp(config, model=s.model())
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(400):
            if app.agent_ready:
                break
            await pilot.pause(0.05)
        screen = app.main_screen
        written: list[str] = []
        screen.notifier.write = written.append
        app.app_focus = False  # the user switched to another window (a key press would focus it again)
        screen.start_turn("say hi")
        for _ in range(400):
            if screen.notifier.sent:
                break
            await pilot.pause(0.05)
        assert screen.notifier.sent == ["Approval needed: [main] print('hi')"]
        app.app_focus = True
        await pilot.pause(0.6)  # the dialog arms
        await pilot.press("y")
        for _ in range(400):
            if not screen.turn_running:
                break
            await pilot.pause(0.05)
        assert len(screen.notifier.sent) == 1  # focused again: the end of the turn is not announced
        assert written and written[0].startswith("\x07")
        await app.action_quit()
