"""The one safe probe of a path someone else chose (``reach.probe``): whatever the path, a value, never an
exception; and the same answer as ``os.stat`` wherever ``os.stat`` answers at all."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.reach import probe

COMPONENTS = st.one_of(
    st.sampled_from(["a", "..", ".", "~", "~nosuchuserxyz", "~root", "", "loop", "file.txt", "dir"]),
    st.integers(250, 600).map(lambda n: "n" * n),  # beyond NAME_MAX: ENAMETOOLONG
    st.text(min_size=1, max_size=8),  # NUL bytes, lone surrogates, controls, anything
)
HOSTILE = st.builds(
    lambda lead, parts: lead + "/".join(parts),
    st.sampled_from(["", "/", "~", "~nosuchuserxyz/", "/tmp/", "./"]),
    st.lists(COMPONENTS, min_size=1, max_size=5),
)
"""Paths of every kind a model or a stored session may hand over."""


def _folder(tmp_path: Path) -> Path:
    """A folder with a file, a folder, a loop of links and a folder that cannot be searched."""
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "dir").mkdir(exist_ok=True)
    if not (tmp_path / "loop").is_symlink():
        (tmp_path / "loop").symlink_to("loop")
    locked = tmp_path / "locked"
    locked.mkdir(exist_ok=True)
    locked.chmod(0)
    return tmp_path


@settings(max_examples=300, deadline=None)
@given(raw=HOSTILE)
def test_probing_any_path_gives_a_value_never_an_exception(raw: str) -> None:
    base = Path("/tmp")
    for path in (raw, base / raw if not raw.startswith("/") else Path(raw)):
        assert isinstance(probe.expanded(path), Path)
        assert isinstance(probe.exists(path), bool)
        assert isinstance(probe.is_file(path), bool)
        assert isinstance(probe.is_dir(path), bool)
        assert isinstance(probe.resolved(path), Path)
        found = probe.stat_of(path)
        assert found is None or isinstance(found, os.stat_result)


def test_the_reported_paths_and_the_folder_s_hostile_members(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    try:
        cases = {
            "/tmp/" + "a" * 300 + "/x.txt": False,  # ENAMETOOLONG (raises in pathlib on 3.11)
            "a" * 300 + ".txt": False,
            "~nosuchuserxyz/a.txt": False,  # RuntimeError from expanduser
            "a\x00b.txt": False,  # ValueError
            "\ud800.txt": False,  # an unencodable character
            str(folder / "loop" / "x"): False,  # ELOOP
            str(folder / "locked" / "x"): False,  # EACCES (as root: ENOENT)
            str(folder / "file.txt"): True,
        }
        for raw, there in cases.items():
            assert probe.exists(raw) is there, raw
            assert probe.is_file(raw) is there, raw
        assert probe.is_dir(folder / "dir") and not probe.is_file(folder / "dir")
        assert probe.expanded("~nosuchuserxyz/a") == Path("~nosuchuserxyz/a")  # as written
        assert probe.expanded("~/a") == Path.home() / "a"
        assert probe.resolved(folder / "loop") == folder / "loop"  # as written, made absolute
        assert probe.resolved("a/../b") == Path.cwd() / "b"
    finally:
        (folder / "locked").chmod(0o700)


@settings(max_examples=100, deadline=None)
@given(name=st.sampled_from(["file.txt", "dir", "nothing", "loop"]))
def test_where_stat_answers_the_probe_says_the_same(name: str, tmp_path_factory: object) -> None:
    folder = Path(str(tmp_path_factory.mktemp("probe")))  # type: ignore[attr-defined]
    _folder(folder)
    try:
        path = folder / name
        try:
            mode: int | None = os.stat(path).st_mode
        except OSError:
            mode = None
        assert probe.exists(path) is (mode is not None)
        assert probe.is_file(path) is (mode is not None and stat.S_ISREG(mode))
        assert probe.is_dir(path) is (mode is not None and stat.S_ISDIR(mode))
    finally:
        (folder / "locked").chmod(0o700)
