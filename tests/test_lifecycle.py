"""The real CLI in a terminal: however it ends (SIGHUP, SIGTERM, SIGINT, SIGKILL), no process is left.

Each test starts ``freeact-tui --model test`` in a pseudo-terminal with its own home, waits until
its kernels run, records every descendant (pid and start time), signals the app and counts the
recorded processes still alive.
"""

from __future__ import annotations

import fcntl
import os
import pty
import shutil
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import psutil
import pytest

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]

START_LIMIT = 150.0  # seconds until the kernels run (a loaded machine is slow)
ORPHAN_LIMIT = 5.0  # seconds the children may outlive the app
QUIT_LIMIT = 40.0  # seconds a clean quit may take under load

needs_sandbox = pytest.mark.skipif(
    (shutil.which("bwrap") is None or shutil.which("socat") is None) and not os.environ.get("CI"),
    reason="bwrap or socat not installed (Debian packages: bubblewrap, socat)",
)


class TerminalApp:
    """``freeact-tui`` running in a pseudo-terminal (its output drained in a thread)."""

    def __init__(self, tmp_path: Path, execution: str) -> None:
        home = tmp_path / "home"
        work = tmp_path / "work"
        home.mkdir()
        work.mkdir()
        env = {
            **os.environ,
            "HOME": str(home),
            "FREEACT_TUI_HOME": str(home / "app"),
            "TERM": "xterm-256color",
        }
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        cmd = [sys.executable, "-m", "freeact_tui", "--model", "test", "--execution", execution]
        self.process = subprocess.Popen(
            cmd, stdin=slave, stdout=slave, stderr=slave, cwd=work, env=env, start_new_session=True
        )
        os.close(slave)
        self._master_open = True
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        try:
            while os.read(self.master, 65536):
                pass
        except OSError:
            pass

    def close_terminal(self) -> None:
        if self._master_open:
            self._master_open = False
            os.close(self.master)

    def descendants(self) -> dict[int, float]:
        """Every process below the app: pid -> start time."""
        found: dict[int, float] = {}
        try:
            below = psutil.Process(self.process.pid).children(recursive=True)
        except psutil.Error:
            return found
        for proc in below:
            try:
                found[proc.pid] = proc.create_time()
            except psutil.Error:
                pass
        return found

    def wait_for_kernels(self, count: int) -> dict[int, float]:
        """Wait until ``count`` kernels run and nothing new starts for a second; the descendants then."""
        deadline = time.monotonic() + START_LIMIT
        last: dict[int, float] = {}
        steady_since = time.monotonic()
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"the app ended early (status {self.process.returncode})"
            now = self.descendants()
            if set(now) != set(last):
                last, steady_since = now, time.monotonic()
            elif sum("ipykernel" in _cmdline(pid) for pid in now) >= count:
                if time.monotonic() - steady_since >= 1.0:
                    return now
            time.sleep(0.2)
        raise AssertionError(f"{count} kernels did not start within {START_LIMIT:g}s: {_describe(last)}")

    def stop(self) -> None:
        self.close_terminal()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def _cmdline(pid: int) -> str:
    try:
        return " ".join(psutil.Process(pid).cmdline())
    except psutil.Error:
        return ""


def _describe(procs: dict[int, float] | list[int]) -> str:
    return "; ".join(f"{pid}: {_cmdline(pid)[:80]}" for pid in procs) or "none"


def alive(recorded: dict[int, float]) -> list[int]:
    """The recorded processes that still run (same pid and start time, not a zombie)."""
    left = []
    for pid, started in recorded.items():
        try:
            proc = psutil.Process(pid)
            if proc.create_time() == started and proc.status() != psutil.STATUS_ZOMBIE:
                left.append(pid)
        except psutil.Error:
            pass
    return left


def wait_gone(recorded: dict[int, float], limit: float) -> tuple[list[int], float]:
    """Poll until no recorded process runs or ``limit`` seconds pass; what is left and the time taken."""
    started = time.monotonic()
    left = alive(recorded)
    while left and time.monotonic() - started < limit:
        time.sleep(0.1)
        left = alive(recorded)
    return left, time.monotonic() - started


def _kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            psutil.Process(pid).kill()
        except psutil.Error:
            pass


def check_signal(tmp_path: Path, execution: str, kernels: int, signum: signal.Signals) -> None:
    app = TerminalApp(tmp_path, execution)
    recorded: dict[int, float] = {}
    try:
        recorded = app.wait_for_kernels(kernels)
        os.kill(app.process.pid, signum)
        if signum == signal.SIGHUP:
            app.close_terminal()  # the terminal is gone, as when its window closes
        if signum != signal.SIGKILL:
            # A clean quit: the app ends by itself (status 0, not killed by the signal).
            assert app.process.wait(QUIT_LIMIT) == 0
        left, took = wait_gone(recorded, ORPHAN_LIMIT)
        assert not left, f"left {len(left)} of {len(recorded)} after {took:.1f}s: {_describe(left)}"
    finally:
        app.stop()
        _kill(alive(recorded))


@pytest.mark.parametrize(
    "signum", [signal.SIGHUP, signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=lambda s: s.name
)
def test_local_app_leaves_no_process(tmp_path: Path, signum: signal.Signals) -> None:
    # Two kernels with --model test: the main agent's and a warm one for subagents.
    check_signal(tmp_path, "local", 2, signum)


@needs_sandbox
@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGKILL], ids=lambda s: s.name)
def test_sandboxed_app_leaves_no_process(tmp_path: Path, signum: signal.Signals) -> None:
    check_signal(tmp_path, "sandbox", 2, signum)
