"""#44 (second attack): what a fork copies of a source whose turn is running (kernel-free).

Before: a fork copied the source's histories as they were at that moment, its open turn included (calls
not answered yet, which the fork then closed as "Interrupted by user."). Now ``copy_history`` copies each
history up to the sizes noted when the running turn began (``history_sizes``): for generated histories
and generated writes during the turn (appends, new subagent histories, a history rewritten shorter), the
copy holds exactly what was settled, and a source at rest is copied whole.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.acp.stored import copy_history
from freeact_tui.store.open_turn import history_sizes

NAMES = st.sampled_from(["main.jsonl", "sub-a.jsonl", "sub-b.jsonl"])
LINES = st.lists(st.binary(min_size=1, max_size=30).map(lambda b: b.replace(b"\n", b" ") + b"\n"), max_size=4)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(NAMES, LINES, max_size=3),
    st.lists(st.tuples(NAMES, LINES), max_size=4),
    st.booleans(),
)
def test_a_fork_copies_exactly_what_was_settled_when_the_turn_began(
    before: dict[str, list[bytes]], during: list[tuple[str, list[bytes]]], rest: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        source, target = Path(tmp) / "source", Path(tmp) / "fork"
        source.mkdir()
        for name, lines in before.items():
            (source / name).write_bytes(b"".join(lines))
        settled = {name: b"".join(lines) for name, lines in before.items()}
        upto = history_sizes(source)
        for name, lines in during:  # the running turn writes on
            with (source / name).open("ab") as f:
                f.write(b"".join(lines))
        now = {p.name: p.read_bytes() for p in source.glob("*.jsonl")}
        copy_history(source, target, None if rest else upto)
        copied = {p.name: p.read_bytes() for p in target.glob("*.jsonl")}
        if rest:
            assert copied == now
        else:
            assert copied == {name: data for name, data in settled.items() if data}


def test_a_history_rewritten_shorter_meanwhile_is_copied_whole(tmp_path: Path) -> None:
    source = tmp_path / "s"
    source.mkdir()
    (source / "main.jsonl").write_bytes(b"one\ntwo\nthree\n")
    upto = history_sizes(source)
    (source / "main.jsonl").write_bytes(b"compacted\n")
    copy_history(source, tmp_path / "f", upto)
    assert (tmp_path / "f" / "main.jsonl").read_bytes() == b"compacted\n"
