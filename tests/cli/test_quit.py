"""Quitting the real CLI (Ctrl+Q in a terminal) is fast, leaves no process and a complete session file."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from freeact_tui.store.sessions import SessionStore
from tests.helpers import (
    CALC_SERVER,
    ORPHAN_LIMIT,
    TerminalApp,
    alive,
    describe_processes,
    kill_processes,
    wait_gone,
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]

QUIT_FAST = 5.0
"""Seconds from Ctrl+Q to the end of the process (about 0.5 s unloaded; a graceful stop of the two
kernels took 9-12 s on the same loaded machine)."""


def _sessions(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "home" / "app").rglob("main.jsonl"))


def test_ctrl_q_during_a_turn_exits_fast_and_leaves_nothing(tmp_path: Path) -> None:
    app = TerminalApp(tmp_path, "local", CALC_SERVER)
    recorded: dict[int, float] = {}
    try:
        recorded = app.wait_for_kernels(2, also="calc.py")  # the main agent's and the warm pool's
        os.write(app.master, b"hello there\r")
        # The test model asks to run code: the turn waits for approval, its first messages written.
        deadline = time.monotonic() + 60
        while not any("hello there" in p.read_text() for p in _sessions(tmp_path)):
            assert time.monotonic() < deadline, "the prompt never reached the session file"
            time.sleep(0.1)
        time.sleep(0.5)
        os.write(app.master, b"\x11")  # Ctrl+Q while a turn runs asks first (a toast) ...
        time.sleep(0.3)
        assert app.process.poll() is None
        started = time.monotonic()
        os.write(app.master, b"\x11")  # ... and a second one quits
        assert app.process.wait(30) == 0
        took = time.monotonic() - started
        assert took < QUIT_FAST, f"quit took {took:.2f}s"
        left, waited = wait_gone(recorded, ORPHAN_LIMIT)
        assert not left, (
            f"left {len(left)} of {len(recorded)} after {waited:.1f}s: {describe_processes(left)}"
        )
    finally:
        app.stop()
        kill_processes(alive(recorded))
    [history] = _sessions(tmp_path)
    store = SessionStore(history.parent.parent)
    [info] = store.list()
    loaded = store.session(info.id).load()
    assert loaded.damage is None and info.damaged is None
    assert info.message_count == len(loaded.messages) >= 2
    assert "hello there" in repr(loaded.messages[0])


def test_alt_enter_as_a_terminal_sends_it_adds_a_line(tmp_path: Path) -> None:
    """ESC CR (what xterm and tmux send for Alt+Enter) reaches the real app as a newline, not as Enter."""
    app = TerminalApp(tmp_path, "local", "subagent_pool_size = 0\n")
    recorded: dict[int, float] = {}
    try:
        recorded = app.wait_for_kernels(1)
        os.write(app.master, b"first line\x1b\rsecond line")
        time.sleep(1.0)
        assert not _sessions(tmp_path), "Alt+Enter sent the prompt"
        os.write(app.master, b"\r")
        deadline = time.monotonic() + 60
        while not any("second line" in p.read_text() for p in _sessions(tmp_path)):
            assert time.monotonic() < deadline, "the prompt never reached the session file"
            time.sleep(0.1)
        os.write(app.master, b"\x11\x11")  # the turn runs: the first Ctrl+Q asks, the second quits
        assert app.process.wait(30) == 0
    finally:
        app.stop()
        kill_processes(alive(recorded))
    [history] = _sessions(tmp_path)
    store = SessionStore(history.parent.parent)
    loaded = store.session(store.list()[0].id).load()
    assert "first line\\nsecond line" in repr(loaded.messages[0])
