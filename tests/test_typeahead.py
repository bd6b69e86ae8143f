"""Keys typed while the app starts (before it has drawn anything) arrive as typed: Enter sends the
prompt instead of becoming a newline in it, and the terminal's settings are as before once the app
has quit (the real CLI in a pty, against the fake OpenAI server)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI, Reply

pytestmark = [pytest.mark.timeout(120)]


def _stages(path: Path) -> dict[str, float]:
    stages: dict[str, float] = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        stage, _, at = line.rpartition(" ")
        stages.setdefault(stage, float(at))
    return stages


def test_a_prompt_typed_before_the_first_frame_is_sent_by_its_enter(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply("six times seven is 42"))
    work = tmp_path / "work"
    work.mkdir()
    timeline = tmp_path / "timeline.txt"
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "FREEACT_TUI_HOME": str(tmp_path / "app"),
        "FREEACT_TUI_TIMELINE": str(timeline),
        "OPENAI_API_KEY": "fake",
        "TERM": "xterm-256color",
    }
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    before = termios.tcgetattr(slave)
    assert before[0] & termios.ICRNL and before[3] & termios.ICANON  # a cooked terminal, as a shell leaves it
    argv = ["--model", "openai:fake-model", "--base-url", fake_openai.url, "-e", "docker"]
    # -e docker: no kernel is needed to answer in text (the kernel is started only when first used);
    # it also checks that a non-local command line holds the keys too.
    app = subprocess.Popen(
        [sys.executable, "-m", "freeact_tui", *argv],
        stdin=slave, stdout=slave, stderr=slave, cwd=work, env=env, start_new_session=True,
    )  # fmt: skip
    screen = bytearray()

    def drain() -> None:
        try:
            while chunk := os.read(master, 65536):
                screen.extend(chunk)
        except OSError:
            pass

    threading.Thread(target=drain, daemon=True).start()
    try:
        deadline = time.monotonic() + 90
        while "entry:hold" not in _stages(timeline):
            assert app.poll() is None and time.monotonic() < deadline, "the app did not start"
            time.sleep(0.005)
        os.write(master, b"what is 6 times 7?\r")  # typed ahead, Enter included
        typed_at = time.monotonic()
        while fake_openai.count < 1:
            assert app.poll() is None and time.monotonic() < deadline, "the prompt was not sent"
            time.sleep(0.05)
        stages = _stages(timeline)
        request = fake_openai.requests[0].last_user_text()
    finally:
        with_group = os.getpgid(app.pid) if app.poll() is None else None
        app.send_signal(signal.SIGTERM)
        try:
            app.wait(30)
        except subprocess.TimeoutExpired:
            app.kill()
            app.wait()
        if with_group is not None:
            with contextlib.suppress(OSError):
                os.killpg(with_group, signal.SIGKILL)
        after = termios.tcgetattr(slave)
        os.close(slave)
        os.close(master)
    assert typed_at < stages["app:mount:end"], "typed after the prompt took keys: nothing was typed ahead"
    assert request.strip() == "what is 6 times 7?", request
    assert after == before, "the terminal's settings were not put back"
