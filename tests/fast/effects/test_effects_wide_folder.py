"""A folder too wide to bound "inside this folder" (the disk's root, a system folder, one that holds the
home): nothing read there is in-folder work, so an "always allow in-folder code" rule saved in a
project never lets code write anywhere from an ACP session opened with ``cwd: /`` (second ACP attack F2)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.effects.reader import SYSTEM_FOLDERS, read_effects, too_wide
from freeact_tui.toolcalls import CodeAction

NAMES = st.text(alphabet="abcdefgh_.", min_size=1, max_size=8).filter(lambda n: n not in (".", ".."))
WRITES = ("open({p!r}, 'w').write('x')", "from pathlib import Path; Path({p!r}).write_text('x')")


@settings(max_examples=80, deadline=None)
@given(
    root=st.sampled_from(sorted({*SYSTEM_FOLDERS, os.path.dirname(os.path.realpath(os.path.expanduser("~")))})),
    parts=st.lists(NAMES, min_size=1, max_size=3),
    form=st.sampled_from(WRITES),
    relative=st.booleans(),
)
def test_nothing_is_in_folder_work_in_a_folder_too_wide(root: str, parts: list[str], form: str, relative: bool) -> None:
    path = os.path.join(*parts) if relative else os.path.join(root, *parts)
    reading = read_effects(CodeAction(form.format(p=path)), Path(root))
    assert reading.effect_class != "in-folder", (root, path)


def test_a_project_folder_still_bounds_in_folder_work(tmp_path: Path) -> None:
    assert not too_wide(os.path.realpath(tmp_path))
    assert read_effects(CodeAction("open('f.txt', 'w').write('x')"), tmp_path).effect_class == "in-folder"


@pytest.mark.parametrize("root", ["/", "/usr", "/etc", "/home"])
def test_the_reported_case(root: str) -> None:
    reading = read_effects(CodeAction("open('/tmp/attack7-acp/ROOTW2','w').write('pwned')"), Path(root))
    assert reading.effect_class != "in-folder"
