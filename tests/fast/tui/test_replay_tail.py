"""A resumed session's tail, read from the end of its file, is the end of the whole (issue #43).

The class: work on the whole history before the user sees anything. The mechanism: the log draws the
last turns from the file's last lines only (``read_tail``, ``tail_items``) and keeps them when the whole
replay ends with exactly them (``before_tail``). Generated sessions (turns of every kind, rewinds,
damaged lines anywhere, a line cut mid-write) hold the properties: the tail read is the end of the
whole read, or nothing; the tail drawn is the end of the whole replay (so it is kept, never a different
log), and the fast path is taken whenever the lines read are clean.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.store.history import read_history, read_tail
from freeact_tui.store.sessions import Session, SessionStore
from freeact_tui.tui.replay import replay_history
from freeact_tui.tui.replay_tail import before_tail, tail_items
from tests.session_turns import KINDS, damage, turn

sessions = st.lists(st.sampled_from(KINDS), min_size=1, max_size=30)


def write(root: Path, kinds: list[str], rewind_at: list[int]) -> Session:
    """A session of these turns; after the turn numbered in ``rewind_at``, a rewind back one turn."""
    session = SessionStore(root, fsync=False).new_session()
    count = 0
    for i, kind in enumerate(kinds):
        messages = turn(i, kind)
        session.append(messages)
        count += len(messages)
        if i in rewind_at:
            count -= len(messages)
            session.rewind(count, f"back before {i}")
    session.flush_meta()
    return session


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kinds=sessions,
    rewind_at=st.lists(st.integers(0, 29), max_size=2),
    damaged=st.none() | st.tuples(st.integers(0, 200), st.sampled_from(["json", "envelope", "message"])),
    cut_tail=st.booleans(),
    count=st.integers(1, 40),
)
def test_the_tail_read_is_the_end_of_the_whole_read_or_nothing(
    kinds: list[str], rewind_at: list[int], damaged: tuple[int, str] | None, cut_tail: bool, count: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp), kinds, rewind_at).history_path()
        if damaged is not None:
            damage(path, *damaged)
        if cut_tail:  # a crash mid-write: an unfinished last line
            path.write_bytes(path.read_bytes() + b'{"v": 1, "mess')
        whole = read_history(path)
        tail = read_tail(path, count)
        if tail is None:
            return
        assert len(tail) <= count
        if whole.damage is None:
            assert tail == whole.messages[len(whole.messages) - len(tail) :]
            assert len(tail) == min(count, len(whole.messages))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kinds=sessions, rewind_at=st.lists(st.integers(0, 29), max_size=2), at_least=st.integers(1, 30))
def test_the_tail_drawn_is_the_end_of_the_whole_replay(kinds: list[str], rewind_at: list[int], at_least: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        session = write(Path(tmp), kinds, rewind_at)
        whole = read_history(session.history_path())
        past = replay_history(whole.messages, rewinds=whole.rewinds)
        tail = tail_items(session, at_least)
        if not whole.rewinds:  # clean lines: the tail is always drawn first, from a turn's start
            assert tail, "the fast path was not taken"
        if tail:
            earlier = before_tail(past, tail)
            assert earlier is not None, "the tail drawn differs from the end of the whole replay"
            assert earlier + tail == past
            assert len(tail) >= min(at_least, len(past)) or not earlier


def test_a_tail_that_differs_from_the_whole_is_not_kept() -> None:
    """Damage before the tail: the whole read ends there, so the tail drawn is not its end (the log is
    drawn again from the whole, with the damage's message)."""
    with tempfile.TemporaryDirectory() as tmp:
        session = write(Path(tmp), ["text"] * 20, [])
        damage(session.history_path(), 3, "message")
        whole = read_history(session.history_path())
        assert whole.damage is not None and whole.damage.line == 4
        tail = tail_items(session, 4)
        assert tail  # the end of the file alone is clean
        assert before_tail(replay_history(whole.messages), tail) is None


def test_a_long_session_reads_only_its_end() -> None:
    """The tail of a long history is read from a few of its lines: a damaged line far before them is
    not read (the whole read, off the event loop, reports it)."""
    with tempfile.TemporaryDirectory() as tmp:
        session = write(Path(tmp), ["code"] * 500, [])
        damage(session.history_path(), 10, "message")
        tail = read_tail(session.history_path(), 8)
        assert tail is not None and len(tail) == 8
        assert read_history(session.history_path()).damage is not None
