"""#42 leftover 2: the names a writer may land on are shown compactly, by structure, in one bounded line.

Class: "a fan-out of candidate names (``landing``) listed name by name". Before: ``plt.savefig('fig')`` read as
"writes inside this folder: fig, fig.avif, fig.eps, fig.gif and 13 more" — the format it writes hidden in the
"more". Now one formatter (``effects.listing.listed``, used by ``describe``: the dialog, the rules screen, the
headless refusal and ACP all show its line) groups names that differ only in suffix (``fig.{avif,eps,…}``)
and bounds the line whatever the names.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.effects import describe, read_effects
from freeact_tui.effects.landing import MATPLOTLIB_IMAGE, NUMPY_NPZ, landed
from freeact_tui.effects.listing import MAX_NAMED, MAX_SUFFIXES, listed
from freeact_tui.toolcalls import CodeAction

STEM = st.text("abxy_/", min_size=1, max_size=8).filter(lambda s: not s.startswith("/") and ".." not in s)
SUFFIX = st.text("abcdefgz", min_size=1, max_size=4)
NAMES = st.lists(
    st.one_of(STEM, st.tuples(STEM, SUFFIX).map(lambda t: f"{t[0]}.{t[1]}")), min_size=1, max_size=40
)
_GROUP = re.compile(r"^(?P<stem>.*)\.\{(?P<suffixes>[^{}]*)\}$")


def _entries(line: str) -> tuple[list[str], int]:
    """The entries of a listed line and the count of names it says are not shown."""
    head, _, more = line.partition(" and ")
    return head.split(", "), int(more.split()[0]) if more else 0


@settings(max_examples=300, deadline=None)
@given(NAMES)
def test_every_name_is_shown_or_counted_and_the_line_is_bounded(names: list[str]) -> None:
    unique = list(dict.fromkeys(names))
    entries, hidden = _entries(listed(unique))
    assert len(entries) <= MAX_NAMED
    shown: list[str] = []
    for entry in entries:
        group = _GROUP.match(entry)
        if group is None:
            shown.append(entry)
            continue
        suffixes = group["suffixes"].split(",")
        extra = 0
        if suffixes[-1].startswith("… "):
            extra = int(suffixes.pop().split()[1])
        assert len(suffixes) <= MAX_SUFFIXES
        members = [f"{group['stem']}.{s}" for s in suffixes]
        assert all(m in unique for m in members)  # a group holds only names that are there
        assert all(os.path.splitext(m)[0] == group["stem"] for m in members)  # differing only in suffix
        shown += members + [f"<{extra} more of {group['stem']}>"] * extra
    assert len(shown) + hidden == len(unique)  # nothing silently dropped


def test_every_fan_out_of_the_landing_table_is_one_entry() -> None:
    for landing, name in ((MATPLOTLIB_IMAGE, "fig"), (MATPLOTLIB_IMAGE, "out/plot"), (NUMPY_NPZ, "arrays")):
        names = landed(landing, name)
        entries, hidden = _entries(listed(sorted(names)))
        assert hidden == 0 and len(entries) <= 2, entries  # the bare name, and its suffixed names as one


def test_the_reported_savefig_reads_as_one_group(tmp_path: Path) -> None:
    code = CodeAction("import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.savefig('fig')")
    words = describe(read_effects(code, tmp_path))
    assert words == "writes inside this folder: fig, fig.{avif,eps,gif,jpeg,… 12 more}"


def test_names_that_would_read_as_a_group_are_shown_alone() -> None:
    assert listed(["a.{b,c}", "a.d"]) == "a.{b,c}, a.d"
    assert listed(["data.csv", "data.json", "notes.txt"]) == "data.{csv,json}, notes.txt"
