"""Headless `run` at a terminal: the model's answer is shown with its escape sequences made visible.

Into a pipe the answer goes as written (a script may want the bytes); at a terminal it would drive it.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
from pathlib import Path

from tests.fake_openai import FakeOpenAI, Reply
from tests.helpers import CLI, cli, fake_args

HOSTILE = "Done.\x1b]52;c;aGFja2Vk\x07\x1b]2;pwned\x07 \x1b[2K\x1b[1Gall good"


ARGS = ("run", "--action-protocol", "tools")


def _run_on_a_terminal(fake_openai: FakeOpenAI, cwd: Path) -> bytes:
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [*CLI, *ARGS, *fake_args(fake_openai), "hi"],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.PIPE,
    )
    os.close(follower)
    written = b""
    try:
        while True:
            ready, _, _ = select.select([leader], [], [], 120)
            if not ready:
                break
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the other end closed
                break
            if not chunk:
                break
            written += chunk
    finally:
        process.wait(timeout=120)
        os.close(leader)
    assert process.returncode == 0, process.stderr.read() if process.stderr else ""
    return written


def test_run_shows_an_answers_escape_sequences_at_a_terminal(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.script(Reply(HOSTILE))
    written = _run_on_a_terminal(fake_openai, tmp_path)
    assert b"all good" in written
    assert b"\x1b" not in written, written
    assert "␛]52;c;aGFja2Vk".encode() in written  # what the model tried is in plain sight


def test_run_into_a_pipe_writes_the_answer_as_the_model_wrote_it(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    fake_openai.script(Reply(HOSTILE))
    done = cli(*ARGS, *fake_args(fake_openai), "hi", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip("\n") == HOSTILE
