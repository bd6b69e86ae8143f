"""A file of the folder with another name (a hard link) may be a file outside it by that name: the reading
never calls work on it in-folder (an attacker's ``ln ~/.bashrc repo/hl.txt`` then ``open('hl.txt', 'a')``;
the sandbox does not hold it in either: it is the very file)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.effects import read_effects
from freeact_tui.toolcalls import CodeAction

_CELLS = (
    "f = open({p!r}, 'a')\nf.write('x')\nf.close()",
    "from pathlib import Path\nPath({p!r}).write_text('x')",
    "print(open({p!r}).read())",
    "from pathlib import Path\nprint(Path({p!r}).read_text())",
)


@settings(max_examples=40, deadline=None)
@given(cell=st.sampled_from(_CELLS), depth=st.integers(0, 2), name=st.sampled_from(["hl.txt", "notes", "bashrc"]))
def test_a_hard_linked_file_is_never_in_folder_work(
    tmp_path_factory: pytest.TempPathFactory, cell: str, depth: int, name: str
) -> None:
    base = tmp_path_factory.mktemp("h")
    outside = base / "home" / ".bashrc"
    outside.parent.mkdir()
    outside.write_text("# rc\n")
    folder = base / "repo"
    inner = folder.joinpath(*["d"] * depth)
    inner.mkdir(parents=True)
    os.link(outside, inner / name)
    relative = os.path.join(*(["d"] * depth), name)
    reading = read_effects(CodeAction(cell.format(p=relative)), folder)
    assert reading.effect_class not in ("reads", "writes", "in-folder", "computes"), reading
    # the same cell on a file with one name stays in the folder
    (inner / name).unlink()
    (inner / name).write_text("x\n")
    assert read_effects(CodeAction(cell.format(p=relative)), folder).effect_class in ("reads", "writes", "in-folder")


def test_the_reported_case_names_the_other_name(tmp_path: Path) -> None:
    outside = tmp_path / ".bashrc"
    outside.write_text("# rc\n")
    folder = tmp_path / "repo"
    folder.mkdir()
    os.link(outside, folder / "hl.txt")
    reading = read_effects(CodeAction("f = open('hl.txt', 'a')\nf.write('echo PWNED\\n')\nf.close()"), folder)
    assert any("another name" in f.what for f in reading.found), reading
