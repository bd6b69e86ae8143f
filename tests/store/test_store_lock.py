"""One writer per session: a second process is refused (naming the pid), a dead one's lock is taken over."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelRequest, UserPromptPart

from freeact_tui.store.lock import LOCK_FILE, SessionLocked
from freeact_tui.store.sessions import SessionStore
from tests import helpers

other_writer = helpers.other_writer  # the fixture: another process holding a session open


def message(text: str) -> ModelRequest:
    return ModelRequest(parts=[UserPromptPart(text)])


def test_a_second_process_is_refused_with_the_pid(
    tmp_path: Path, other_writer: Callable[[str], subprocess.Popen[str]]
) -> None:
    store = SessionStore(tmp_path / "sessions")
    session_id = store.new_session().id
    other = other_writer(session_id)
    mine = store.session(session_id)
    with pytest.raises(SessionLocked) as caught:
        mine.lock()
    assert caught.value.pid == other.pid and f"pid {other.pid}" in str(caught.value)
    with pytest.raises(SessionLocked):
        mine.append([message("from this window")])
    assert "from this window" not in mine.history_path().read_text()  # nothing interleaved
    assert other.stdin is not None
    other.stdin.close()  # the other window quits and releases the lock
    other.wait()
    assert not (mine.dir / LOCK_FILE).exists()
    mine.append([message("from this window")])
    assert (mine.dir / LOCK_FILE).read_text().strip() == str(os.getpid())
    mine.unlock()
    assert not (mine.dir / LOCK_FILE).exists()


def test_the_lock_of_a_dead_process_is_taken_over(
    tmp_path: Path, other_writer: Callable[[str], subprocess.Popen[str]]
) -> None:
    store = SessionStore(tmp_path / "sessions")
    session_id = store.new_session().id
    other = other_writer(session_id)
    other.kill()  # a crash: the lock file stays behind with a dead pid
    other.wait()
    lock = store.session(session_id).dir / LOCK_FILE
    assert lock.read_text().strip() == str(other.pid)
    mine = store.session(session_id)
    mine.append([message("after the crash")])
    assert lock.read_text().strip() == str(os.getpid())
    assert len(mine.load().messages) == 2


def test_one_process_shares_its_lock(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    first = store.new_session()
    first.append([message("main")])
    second = store.session(first.id)  # e.g. a subagent's recorder in the same process
    second.append([message("sub")], agent_id="sub-0001")
    second.unlock()  # it did not take the lock: it leaves it
    assert (first.dir / LOCK_FILE).exists()
    first.unlock()
    assert not (first.dir / LOCK_FILE).exists()


def test_rm_refuses_a_session_open_in_another_process(
    tmp_path: Path, other_writer: Callable[[str], subprocess.Popen[str]]
) -> None:
    store = SessionStore(tmp_path / "sessions")
    session_id = store.new_session().id
    other = other_writer(session_id)
    cli = [str(Path(sys.executable).parent / "freeact-tui"), "sessions", "rm", session_id, "--yes"]
    cli += ["--sessions-dir", str(tmp_path / "sessions")]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(cli, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1 and f"pid {other.pid}" in done.stderr and "Traceback" not in done.stderr
    assert store.session(session_id).history_path().is_file()  # nothing removed under its writer
    assert other.stdin is not None
    other.stdin.close()
    other.wait()
    done = subprocess.run(cli, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0 and not store.session(session_id).dir.exists()
