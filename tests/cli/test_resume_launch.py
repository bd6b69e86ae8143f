"""The resume hint works as printed (issue 43): a resumed session takes its model, protocol and base URL
from its ``meta.json`` unless the command line gives them; keys stay in the environment."""

from __future__ import annotations

import json
import os
import pty
import re
import struct
import subprocess
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from freeact_tui.store.index import read_meta, refresh_meta
from freeact_tui.store.restored import RESUMED_KEYS, resumed_values
from freeact_tui.store.sessions import SessionStore
from tests.helpers import CLI, cli, kill_processes, with_home

RECORD = {"model": "demo", "action_protocol": "text", "base_url": "http://127.0.0.1:9/v1"}

ROWS = [
    # (recorded, given on the command line) -> taken from the record
    (RECORD, {}, RECORD),
    (RECORD, {"model": None, "base_url": None, "action_protocol": None}, RECORD),
    (RECORD, {"action_protocol": "tools"}, {"model": "demo", "base_url": "http://127.0.0.1:9/v1"}),
    (RECORD, {"model": "openai:gpt-4o"}, {}),  # another endpoint: none of the old one's settings
    (RECORD, {"base_url": "http://other/v1"}, {}),
    ({"model": "demo", "action_protocol": "bogus"}, {}, {"model": "demo"}),  # a damaged record
    ({"model": "", "action_protocol": 3}, {}, {}),
    ({"api_key": "sk-secret", "model": "demo"}, {}, {"model": "demo"}),  # keys never come from a file
    ({}, {}, {}),
]


@pytest.mark.parametrize(("recorded", "given_", "taken"), ROWS)
def test_resumed_overrides(
    recorded: dict[str, object], given_: dict[str, object], taken: dict[str, str]
) -> None:
    assert resumed_values(recorded, given_) == taken


@given(
    st.dictionaries(
        st.sampled_from([*RESUMED_KEYS, "api_key", "other"]),
        st.one_of(st.text(max_size=8), st.none(), st.integers()),
    ),
    st.dictionaries(
        st.sampled_from([*RESUMED_KEYS, "execution"]), st.one_of(st.none(), st.text(min_size=1, max_size=8))
    ),
)
def test_the_record_never_beats_the_command_line(
    recorded: dict[str, object], given_: dict[str, object]
) -> None:
    taken = resumed_values(recorded, given_)
    assert set(taken) <= set(RESUMED_KEYS)
    assert not any(given_.get(key) is not None for key in taken)
    assert all(isinstance(v, str) and v == recorded[k] for k, v in taken.items())
    if given_.get("model") is not None or given_.get("base_url") is not None:
        assert taken == {}


def test_the_launch_record_survives_a_rebuilt_meta(tmp_path: Path) -> None:
    session = SessionStore(tmp_path).new_session()
    session.append([_request("hello")])
    session.update_meta(launch=RECORD)
    assert read_meta(session.dir) is not None and read_meta(session.dir).launch == RECORD  # type: ignore[union-attr]
    # The history rewritten behind the index's back (another writer): the meta is rebuilt, the record kept.
    main = session.dir / "main.jsonl"
    main.write_text(main.read_text().splitlines()[0] + "\n" + main.read_text().splitlines()[0] + "\n")
    meta = refresh_meta(session.dir)
    assert meta.message_count == 2 and meta.launch == RECORD
    assert SessionStore(tmp_path).list()[0].launch == RECORD


def _request(text: str) -> object:
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    return ModelRequest(parts=[UserPromptPart(text)])


def test_headless_run_resumes_with_the_sessions_model(tmp_path: Path) -> None:
    first = cli("run", "--model", "demo", "--output-format", "json", "hi", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout.strip().splitlines()[-1])["session_id"]
    again = cli("run", "--session-id", session_id[:8], "hello again", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "No model" not in again.stderr + again.stdout


# -- the printed hint, in a terminal -------------------------------------------------------------------


class Terminal:
    """``freeact-tui ARGS`` on a 100x30 pseudo-terminal; everything it writes is kept in ``output``."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        import fcntl
        import termios

        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.process = subprocess.Popen(
            [*CLI, *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self.master = master
        self.output = b""
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            while chunk := os.read(self.master, 65536):
                self.output += chunk
        except OSError:
            pass

    def wait_for(self, check: object, limit: float = 90.0) -> None:
        deadline = time.monotonic() + limit
        while not check():  # type: ignore[operator]
            assert self.process.poll() is None, f"the app ended: {self.output[-2000:]!r}"
            assert time.monotonic() < deadline, f"not reached: {self.output[-2000:]!r}"
            time.sleep(0.1)

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        os.close(self.master)


def _responses(home: Path) -> list[str]:
    """The model names of every response in every main history below ``home``."""
    names = []
    for history in sorted(home.rglob("main.jsonl")):
        for line in history.read_text().splitlines():
            message = json.loads(line)["message"]
            if message.get("kind") == "response":
                names.append(message.get("model_name"))
    return names


@pytest.mark.kernel
@pytest.mark.timeout(300)
def test_the_printed_resume_command_opens_the_session_with_its_model(tmp_path: Path) -> None:
    home = tmp_path / "home"
    work = tmp_path / "work"
    home.mkdir()
    work.mkdir()
    env = {**os.environ, "HOME": str(home), "FREEACT_TUI_HOME": str(home / "app"), "TERM": "xterm-256color"}
    env.pop("FREEACT_TUI_MODEL", None)
    first = Terminal(["--model", "demo"], env, work)
    try:
        first.wait_for(lambda: b"Ask anything" in first.output)
        first.type(b"hi\r")
        first.wait_for(lambda: len(_responses(home)) >= 1)
        time.sleep(0.5)
        first.type(b"\x11")  # Ctrl+Q
        assert first.process.wait(60) == 0
        time.sleep(0.3)
    finally:
        first.close()
    printed = re.search(rb"Resume this session with: (freeact-tui [^\r\n]+)", first.output)
    assert printed is not None, first.output[-2000:]
    command = printed.group(1).decode().split()
    assert command[:2] == ["freeact-tui", "--session-id"]
    second = Terminal(command[1:], env, work)  # exactly the printed command (the module for the program)
    try:
        second.wait_for(lambda: b"Ask anything" in second.output)
        second.type(b"hello again\r")
        second.wait_for(lambda: len(_responses(home)) >= 2)
        assert b"No model is configured" not in second.output
        assert _responses(home) == ["demo", "demo"]  # the same session, answered by the demo model again
        assert len(list(home.rglob("main.jsonl"))) == 1
    finally:
        second.close()
        kill_processes(with_home(home))
