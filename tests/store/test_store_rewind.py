"""A conversation rewind in a session file: the whole file archived byte for byte, then replaced
atomically by its kept lines plus a marker — so freeact's loader sees exactly the cut history — with
our loader, the listing, rollbacks and old (appended) markers all agreeing, and a crash or a failed
write at any step leaving the old file or the new one, never a damaged one."""

from __future__ import annotations

import errno
import json
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart

from freeact_tui.store import rewind_file
from freeact_tui.store.envelope import encode_envelope, utc_now_ts
from freeact_tui.store.lock import SessionLocked
from freeact_tui.store.sessions import Session, SessionStore, rewind_marker
from tests.helpers import conversation, dumped, freeact_load

NOTE = "[Note: rewound to before “second”]"


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def append_legacy_marker(session: Session, keep: int, note: str) -> None:
    """A marker as freeact-tui up to this change appended it (``{"keep": n}`` after the withdrawn lines)."""
    payload, extra = rewind_marker(keep, note)
    with session.history_path().open("ab") as fh:
        fh.write(encode_envelope(payload, utc_now_ts(), extra))


def test_rewind_archives_the_file_and_leaves_the_kept_prefix_plus_a_marker(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    session = store.new_session()
    first, second, third = conversation("first"), conversation("second"), conversation("third")
    session.append(first + second + third)
    session.append(conversation("sub task")[:2], agent_id="sub-0a1b")
    path, sub = session.history_path(), session.history_path("sub-0a1b")
    before, sub_before = path.read_bytes(), sub.read_bytes()
    prefix = b"".join(lines_of(path)[: len(first)])

    mark = session.rewind(len(first), NOTE)

    archive = session.dir / "rewound" / "main.1.jsonl"
    assert mark.archive == archive and archive.read_bytes() == before  # nothing lost, byte for byte
    after = path.read_bytes()
    assert (
        after.startswith(prefix) and after.count(b"\n") == len(first) + 1
    )  # the kept lines, then one marker
    marker = json.loads(after[len(prefix) :])
    assert marker["meta"]["rewind"] == {
        "keep": len(first),
        "withdrawn": {"messages": len(second + third), "turns": 2},
        "archive": "rewound/main.1.jsonl",
    }
    # freeact's loader: exactly the kept messages, then the marker (a user request saying what happened)
    by_freeact = freeact_load(path)
    assert dumped(by_freeact[:-1]) == dumped(first)
    assert by_freeact[-1].parts[0].content == NOTE  # type: ignore[union-attr]
    assert dumped(freeact_load(archive)) == dumped(first + second + third)
    assert sub.read_bytes() == sub_before  # subagent histories are untouched

    loaded = store.session(session.id).load()
    assert dumped(loaded.messages) == dumped(first) and loaded.rewind_note == NOTE
    (where,) = loaded.rewinds
    assert (where.at, where.withdrawn_messages, where.withdrawn_turns, where.archive) == (4, 8, 2, archive)
    assert "2 turns (8 messages) withdrawn; kept in" in where.describe()
    assert store.session(session.id).info().message_count == len(first)
    (info,) = store.list()
    assert info.message_count == len(first) and info.size_bytes >= len(before) + len(after)
    assert store.session(session.id).subagent_ids() == ["sub-0a1b"]  # the archive is no agent's history

    # Appends and rollbacks go on from the rewritten file as before.
    fourth = conversation("fourth")
    session.append(fourth)
    loaded = store.session(session.id).load()
    assert dumped(loaded.messages) == dumped(first + fourth) and loaded.rewind_note is None
    assert dumped(freeact_load(path)) == dumped([*first, by_freeact[-1], *fourth])
    session.rollback(len(first) + 1)
    assert dumped(store.session(session.id).load().messages) == dumped(first + fourth[:1])
    session.rollback(len(first))  # never past the marker
    assert path.read_bytes() == after

    # A second rewind, further back: a second archive, the first one unchanged.
    session.append(fourth)
    second_before = path.read_bytes()
    session.rewind(0, "cut all")
    assert (session.dir / "rewound" / "main.2.jsonl").read_bytes() == second_before
    assert archive.read_bytes() == before
    assert len(freeact_load(path)) == 1  # only the marker
    reloaded = store.session(session.id).load()
    assert reloaded.messages == [] and [m.at for m in reloaded.rewinds] == [0]
    assert store.session(session.id).info().message_count == 0


def test_sessions_with_appended_markers_of_the_earlier_version_load_as_before_and_rewind_cleanly(
    tmp_path: Path,
) -> None:
    store = SessionStore(tmp_path / "sessions")
    session = store.new_session()
    a, b, c = conversation("a"), conversation("b"), conversation("c")
    session.append(a + b)
    append_legacy_marker(session, len(a), "cut b")
    session.append(c)
    path = session.history_path()
    loaded = store.session(session.id).load()
    assert dumped(loaded.messages) == dumped(a + c) and loaded.rewind_note is None
    (old,) = loaded.rewinds
    assert (old.at, old.withdrawn_messages, old.withdrawn_turns, old.archive, old.in_file) == (
        4,
        4,
        1,
        None,
        True,
    )
    assert "stay earlier in main.jsonl" in old.describe()
    assert store.session(session.id).info().message_count == len(a + c)

    before = path.read_bytes()
    raw = lines_of(path)
    session.rewind(len(a) + 2, "cut half of c")
    assert (session.dir / "rewound" / "main.1.jsonl").read_bytes() == before
    kept = lines_of(path)
    # b's lines (withdrawn by the old marker) are gone, the old marker stays where it was: a, marker, c[:2]
    assert kept[:-1] == raw[: len(a)] + [raw[len(a + b)]] + raw[len(a + b) + 1 : len(a + b) + 3]
    by_freeact = freeact_load(path)
    assert len(by_freeact) == len(a) + 1 + 2 + 1
    assert dumped([*by_freeact[: len(a)], *by_freeact[len(a) + 1 : -1]]) == dumped(a + c[:2])
    loaded = store.session(session.id).load()
    assert dumped(loaded.messages) == dumped(a + c[:2]) and loaded.rewind_note == "cut half of c"
    assert [(m.at, m.in_file) for m in loaded.rewinds] == [(4, True), (6, False)]


def test_two_appended_markers_apply_in_order(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    session = store.new_session()
    a, b, c = conversation("a"), conversation("b"), conversation("c")
    session.append(a + b)
    append_legacy_marker(session, len(a), "cut b")
    session.append(c)
    append_legacy_marker(session, 0, "cut all")
    loaded = store.session(session.id).load()
    assert loaded.messages == [] and loaded.rewind_note == "cut all"
    assert [m.at for m in loaded.rewinds] == [0]  # the first mark was inside what the second withdrew
    session.append([ModelRequest(parts=[UserPromptPart("fresh")])])
    assert len(store.session(session.id).load().messages) == 1


def test_rewind_respects_the_session_lock(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    session = store.new_session()
    session.append(conversation("first") + conversation("second"))
    session.unlock()
    (session.dir / "lock").write_text(f"{os.getppid()}\n")  # a live process writes this session
    before = session.history_path().read_bytes()
    with pytest.raises(SessionLocked):
        store.session(session.id).rewind(4, NOTE)
    assert session.history_path().read_bytes() == before
    assert not (session.dir / "rewound").exists()


def test_rewind_of_a_damaged_history_is_refused(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    session = store.new_session()
    session.append(conversation("first") + conversation("second"))
    path = session.history_path()
    broken = lines_of(path)
    broken[1] = b'{"v": 2}\n'
    path.write_bytes(b"".join(broken))
    damaged = store.session(session.id)
    assert damaged.load().damage is not None
    with pytest.raises(Exception, match="line 2"):
        damaged.rewind(4, NOTE)
    assert path.read_bytes() == b"".join(broken)


# -- crashes and failures at every step -------------------------------------------------------------

_STEPS = ("open", "write", "fsync", "replace", "unlink", "mkdir", "close")


class _Faulty:
    """``os`` as ``rewind_file`` sees it, with ``fault()`` run at the ``at``-th call of a file operation."""

    def __init__(self, at: int, fault: Callable[[], None]) -> None:
        self.calls, self.at, self.fault = 0, at, fault

    def __getattr__(self, name: str) -> Any:
        real = getattr(os, name)
        if name not in _STEPS:
            return real

        def step(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.calls == self.at:
                self.fault()
            return real(*args, **kwargs)

        return step


def _session_with_history(root: Path) -> tuple[SessionStore, Session, list[ModelMessage]]:
    store = SessionStore(root)
    session = store.new_session()
    messages = conversation("first") + conversation("second") + conversation("third")
    session.append(messages)
    session.unlock()
    return store, session, messages


def _check_old_or_new(store: SessionStore, session: Session, old: bytes) -> bool:
    """The history is the old file or the rewound one (its first 4 lines + a marker), whole; every named
    archive is the old file byte for byte. Returns whether it is the rewound one."""
    path = session.history_path()
    now = path.read_bytes()
    rewound = now != old
    if rewound:
        lines = now.splitlines(keepends=True)
        assert lines[:-1] == old.splitlines(keepends=True)[:4] and lines[-1].endswith(b"\n")
        assert json.loads(lines[-1])["meta"]["rewind"]["keep"] == 4
    assert len(freeact_load(path)) == (5 if rewound else 12)
    loaded = store.session(session.id).load()
    assert loaded.damage is None and not loaded.truncated_tail
    assert len(loaded.messages) == (4 if rewound else 12)
    for archive in (session.dir / "rewound").glob("*.jsonl"):
        assert archive.read_bytes() == old, f"{archive.name} is not the old file byte for byte"
    return rewound


def test_a_kill_at_any_step_leaves_the_old_file_or_the_new_one(tmp_path: Path) -> None:
    """The rewind runs in a forked child that SIGKILLs itself at the n-th file operation, for every n."""
    outcomes = []
    for at in range(1, 60):
        store, session, _ = _session_with_history(tmp_path / f"kill{at}")
        old = session.history_path().read_bytes()
        pid = os.fork()
        if pid == 0:  # the child: rewind, dying at step `at`
            try:
                rewind_file.os = _Faulty(at, lambda: os.kill(os.getpid(), signal.SIGKILL))  # type: ignore[attr-defined]
                store.session(session.id).rewind(4, NOTE)
            finally:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        killed = os.WIFSIGNALED(status)
        rewound = _check_old_or_new(store, session, old)
        outcomes.append((killed, rewound))
        if not rewound:  # recovery: the next rewind succeeds and removes what the killed one left
            store.session(session.id).rewind(4, NOTE)
            assert _check_old_or_new(store, session, old)
        assert [p.name for p in session.dir.rglob("*.tmp")] == []
        if not killed:
            break
    kills = [rewound for killed, rewound in outcomes if killed]
    assert len(kills) >= 12 and not outcomes[-1][0]  # killed at every step, then it finished
    assert False in kills and True in kills  # killed before the switch (old file) and after it (new file)


@pytest.mark.parametrize("errno_", [errno.ENOSPC, errno.EIO])
def test_a_failed_step_raises_and_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, errno_: int
) -> None:
    failures = 0
    for at in range(1, 60):
        store, session, _ = _session_with_history(tmp_path / f"fail{at}")
        old = session.history_path().read_bytes()

        def fail() -> None:
            raise OSError(errno_, os.strerror(errno_))

        monkeypatch.setattr(rewind_file, "os", _Faulty(at, fail))
        try:
            store.session(session.id).rewind(4, NOTE)
        except OSError as exc:
            failures += 1
            assert exc.errno == errno_
            assert not _check_old_or_new(store, session, old)  # an error means: nothing was rewound
            assert [p.name for p in session.dir.rglob("*.tmp")] == []
        else:
            assert _check_old_or_new(store, session, old)
            break
        finally:
            monkeypatch.setattr(rewind_file, "os", os)
    assert failures >= 12


def test_no_kept_line_changes_when_the_file_is_rewritten(tmp_path: Path) -> None:
    """Odd but valid lines (unicode escapes, a line separator inside a string) are kept byte for byte."""
    store = SessionStore(tmp_path / "sessions")
    session = store.new_session()
    odd = [ModelRequest(parts=[UserPromptPart("naïve \u2028 line\u2029sep 🙂")])]
    session.append(odd + conversation("second"))
    path = session.history_path()
    first_line = lines_of(path)[0]
    session.rewind(1, NOTE)
    assert lines_of(path)[0] == first_line
    by_freeact = freeact_load(path)
    assert dumped(by_freeact[:1]) == dumped(odd) and len(by_freeact) == 2


def test_sessions_show_and_export_mark_the_rewind(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from freeact_tui.cli import app

    sessions = tmp_path / "sessions"
    config = tmp_path / "config.toml"
    config.write_text(f"sessions_dir = {str(sessions)!r}\n")
    session = SessionStore(sessions).new_session()
    session.append(conversation("first") + conversation("second"))
    session.rewind(4, NOTE)
    session.unlock()
    archive = session.dir / "rewound" / "main.1.jsonl"
    runner = CliRunner()
    shown = runner.invoke(app, ["sessions", "show", session.id, "--config", str(config)])
    assert shown.exit_code == 0, shown.output
    assert "first" in shown.output and "second" not in shown.output
    assert (
        "── Rewound" in shown.output and f"1 turn (4 messages) withdrawn; kept in {archive}" in shown.output
    )
    exported = runner.invoke(app, ["sessions", "export", session.id, "--config", str(config)])
    assert exported.exit_code == 0, exported.output
    assert "## Rewound" in exported.output and str(archive) in exported.output
