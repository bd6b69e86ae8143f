"""Hostile input to the real command line: a clear message, no traceback, nothing touched outside.

Damaged and huge session files, symlinks pointing out of the sessions dir, session ids with path
parts, broken configs and permission files. Every case runs the real CLI in a fresh process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from freeact_tui.store.envelope import encode_envelope, utc_now_ts

CLI = [sys.executable, "-c", "from freeact_tui.cli import main; main()"]


def cli(*args: str, cwd: Path, home: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FREEACT_TUI_HOME": str(home), "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run([*CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def clean(done: subprocess.CompletedProcess[str]) -> str:
    """The output of a run that must not show a traceback."""
    both = done.stdout + done.stderr
    assert "Traceback" not in both, both
    return both


def write_session(root: Path, prompt: str, extra: bytes = b"") -> str:
    sid = str(uuid.uuid4())
    directory = root / sid
    directory.mkdir(parents=True)
    ts = utc_now_ts()
    request = {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": prompt, "timestamp": ts}]}
    response = {"kind": "response", "parts": [{"part_kind": "text", "content": f"answer to {prompt}"}]}
    (directory / "main.jsonl").write_bytes(
        encode_envelope(request, ts) + encode_envelope(response, ts) + extra
    )
    return sid


def snapshot(directory: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(directory)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def sessions(home: Path) -> Path:
    root = home / "data" / "sessions"
    root.mkdir(parents=True)
    return root


def test_damaged_and_huge_sessions_do_not_break_the_others(
    tmp_path: Path, home: Path, sessions: Path
) -> None:
    tail = encode_envelope(
        {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "later"}]}, "x"
    )
    good = write_session(sessions, "good one")
    damaged = write_session(
        sessions, "damaged one", b'{"v": 1, "message": {"kind": "resp\x00\xff garbage\n' + tail
    )
    huge = write_session(sessions, "huge one", b"x" * (30 * 2**20) + b"\n" + tail)  # a 30 MB broken line
    torn = write_session(sessions, "torn one", b'{"v": 1, "message": {"kind": "req')  # a write cut by a crash
    binary = sessions / str(uuid.uuid4())
    binary.mkdir()
    (binary / "main.jsonl").write_bytes(os.urandom(4096))

    listed = cli("sessions", "list", cwd=tmp_path, home=home)
    out = clean(listed)
    assert listed.returncode == 0
    for sid in (good, damaged, huge, torn):
        assert sid[:8] in out

    for sid in (good, torn):  # a torn last line is the message in flight: the rest loads as it was
        shown = cli("sessions", "show", sid, cwd=tmp_path, home=home)
        assert shown.returncode == 0 and "answer to" in clean(shown)
    for sid in (damaged, huge):
        shown = cli("sessions", "show", sid, cwd=tmp_path, home=home)
        text = clean(shown)
        assert "answer to" in text  # what is readable before the damage is shown
        assert "damaged" in text and "line 3" in text and str(sessions / sid / "main.jsonl") in text
        resumed = cli(
            "run", "--session-id", sid, "--model", "test", "hi", cwd=tmp_path, home=home, timeout=120
        )
        text = clean(resumed)
        assert resumed.returncode != 0 and "damaged" in text


def test_symlinks_out_of_the_sessions_dir_are_never_followed_or_touched(
    tmp_path: Path, home: Path, sessions: Path
) -> None:
    outside = tmp_path / "outside"
    outside_session = outside / str(uuid.uuid4())
    write_session(outside, "outside")
    (outside / "secret.txt").write_text("keep me")
    before = snapshot(outside)

    linked_dir = sessions / outside_session.name
    linked_dir.symlink_to(next(outside.glob("*-*-*-*-*")), target_is_directory=True)
    own = write_session(sessions, "own")
    (sessions / own / "sub-x.jsonl").symlink_to(outside / "secret.txt")

    listed = cli("sessions", "list", cwd=tmp_path, home=home)
    assert listed.returncode == 0 and own[:8] in clean(listed)
    assert "outside" not in listed.stdout  # the linked dir is not a session of this store

    for args in (("sessions", "rm", "--yes", linked_dir.name), ("sessions", "show", linked_dir.name)):
        done = cli(*args, cwd=tmp_path, home=home)
        assert done.returncode != 0
        clean(done)
    removed = cli("sessions", "rm", "--yes", own, cwd=tmp_path, home=home)
    clean(removed)
    assert snapshot(outside) == before  # nothing outside was read into meta, rewritten or deleted
    assert (outside / "secret.txt").read_text() == "keep me"


@pytest.mark.parametrize(
    "bad_id",
    [
        "../../etc/passwd",
        "/etc/passwd",
        "..",
        "a/b",
        "00000000-0000-4000-8000-000000000000/../x",
        "\x00",
        "-x",
    ],
)
def test_ids_with_path_parts_are_refused_clearly(
    tmp_path: Path, home: Path, sessions: Path, bad_id: str
) -> None:
    write_session(sessions, "present")
    before = snapshot(home)
    for args in (
        ("--session-id", bad_id, "--model", "test"),
        ("sessions", "show", bad_id),
        ("sessions", "rm", "--yes", bad_id),
        ("sessions", "export", bad_id),
    ):
        if "\x00" in bad_id:
            continue  # a NUL cannot be passed in argv at all
        done = cli(*args, cwd=tmp_path, home=home)
        assert done.returncode != 0, args
        text = clean(done)
        assert "session" in text.lower() or "option" in text.lower(), text
    assert snapshot(home) == before


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"model = [unclosed\n", "not valid TOML"),
        (b"\xff\xfe model = 1\n", "not UTF-8"),
        (b"max_subagents = -3\n", "max_subagents"),
        (b"modle = 'typo'\n", "unknown"),
        (b"[mcp_servers.x]\nargs = []\n", "command"),
        (b"execution = 'cloud'\n", "execution"),
    ],
)
def test_broken_configs_give_one_clear_message(
    tmp_path: Path, home: Path, content: bytes, words: str
) -> None:
    config = tmp_path / "broken.toml"
    config.write_bytes(content)
    for args in (("--config", str(config), "--model", "test"), ("--config", str(config), "sessions", "list")):
        done = cli(*args, cwd=tmp_path, home=home)
        assert done.returncode != 0
        text = clean(done)
        assert str(config) in text and words in text, text


def test_a_broken_permissions_file_is_named_and_kept(tmp_path: Path, home: Path) -> None:
    rules = home / "config" / "permissions.json"
    rules.parent.mkdir(parents=True)
    rules.write_text('{"allow": [{"kind": "code"}]}')
    done = cli(
        "run", "--model", "test", "--output-format", "json", "hi", cwd=tmp_path, home=home, timeout=120
    )
    text = clean(done)
    assert done.returncode != 0 and str(rules) in text
    assert json.loads(rules.read_text()) == {"allow": [{"kind": "code"}]}  # never rewritten
