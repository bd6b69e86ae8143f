"""Crash safety: a writer process SIGKILLed at random moments loses at most the message it was writing."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from pydantic_ai.messages import BinaryContent, UserPromptPart

from freeact_tui.store import SessionStore, new_session_id

# A fork server: it imports once, then forks one appending child per command, so that each of the
# 20 kills costs milliseconds rather than an interpreter start. The children are what gets killed.
WRITER = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from pydantic_ai.messages import BinaryContent, ModelRequest, UserPromptPart
    from freeact_tui.store import SessionStore

    def message(i):
        size = (i * 7919) % 30_000
        return ModelRequest(parts=[UserPromptPart([f"message {i}", BinaryContent(bytes([i % 256]) * size, media_type="image/png")])])

    root, session_id = Path(sys.argv[1]), sys.argv[2]
    os.write(1, b"ready\\n")
    for command in sys.stdin:
        start = int(command)
        pid = os.fork()
        if pid == 0:
            session = SessionStore(root).session(session_id)
            i = start
            while True:
                session.append([message(i)])
                os.write(1, f"ack {i}\\n".encode())
                i += 1
        # One write() per line (atomic on a pipe): print() may split "pid N" from its newline,
        # and the child's acks land in between ("pid 8413ack 97").
        os.write(1, f"pid {pid}\\n".encode())
        os.waitpid(pid, 0)
        os.write(1, b"reaped\\n")
    """
)


def check_message(part: object, i: int) -> None:
    assert isinstance(part, UserPromptPart)
    text, image = list(part.content)
    assert text == f"message {i}"
    assert isinstance(image, BinaryContent) and image.data == bytes([i % 256]) * ((i * 7919) % 30_000)


@pytest.mark.timeout(120)
def test_sigkilled_writer_loses_at_most_the_message_in_flight(tmp_path: Path) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    root = tmp_path / "sessions"
    session_id = new_session_id()
    store = SessionStore(root)
    rng = random.Random(20240611)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(root), session_id],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "ready"
        loaded_count = 0
        for _ in range(20):
            proc.stdin.write(f"{loaded_count}\n")
            proc.stdin.flush()
            acked = loaded_count - 1
            line = proc.stdout.readline()
            while not line.startswith("pid"):
                acked = int(line.split()[1])
                line = proc.stdout.readline()
            pid = int(line.split()[1])
            while acked < loaded_count:  # one message at least per child, however loaded the machine
                line = proc.stdout.readline()
                assert line.startswith("ack"), line
                acked = int(line.split()[1])
            time.sleep(rng.uniform(0.005, 0.06))
            os.kill(pid, signal.SIGKILL)
            for line in iter(proc.stdout.readline, "reaped\n"):
                assert line.startswith("ack"), line
                acked = int(line.split()[1])

            history = store.session(session_id).load()

            assert history.damage is None
            count = len(history.messages)
            assert acked + 1 <= count <= acked + 2, (acked, count)
            for i in range(loaded_count, count):
                check_message(history.messages[i].parts[0], i)
            assert store.list()[0].message_count == count
            loaded_count = count
        assert loaded_count >= 20  # every child wrote (the kills landed mid-stream, not before it)
    finally:
        proc.kill()
        proc.wait()
