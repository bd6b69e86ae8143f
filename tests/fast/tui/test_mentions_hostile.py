"""``@path`` mentions typed by the user are paths someone else chose too (#44 atk9a F2, the TUI's neighbour):
``@~nosuchuser/x``, a name longer than NAME_MAX, a loop of links, a NUL byte. Each names no file: the prompt
goes as typed, never an exception (the mention is probed with ``reach.probe``)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.tui.mentions import attach_mentions

TOKENS = st.one_of(
    st.sampled_from(["~nosuchuserxyz/a.txt", "~nosuchuserxyz", "a" * 300 + ".txt", "loop/x", "d/" + "b" * 400]),
    st.integers(256, 600).map(lambda n: "n" * n),
    st.text(st.characters(blacklist_characters=" \t\n`'\"<>|"), min_size=1, max_size=10),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(token=TOKENS)
def test_a_mention_no_probe_can_take_leaves_the_prompt_as_typed(token: str, tmp_path: Path) -> None:
    if not (tmp_path / "loop").is_symlink():
        (tmp_path / "loop").symlink_to("loop")
    typed = f"look at @{token} please"
    sent = attach_mentions(typed, tmp_path)
    assert sent.startswith(typed)


def test_the_reported_kinds_of_path_name_no_file(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to("loop")
    for token in ["~nosuchuserxyz/a.txt", "a" * 300 + ".txt", "loop/x", "a\x00b"]:
        assert attach_mentions(f"see @{token}", tmp_path) == f"see @{token}"
