"""#44 (third attack, F1): a client's ``cwd`` is checked by one function, and no path makes it raise anything
but invalid params (-32602). Before: a path component over 255 bytes let ``ENAMETOOLONG`` escape
``Path.is_dir()`` (Python 3.11) as an internal error with a traceback."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from acp import RequestError
from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.acp.client_paths import client_folder

COMPONENT = st.one_of(
    st.text(min_size=1, max_size=20).filter(lambda t: "/" not in t),
    st.integers(200, 5000).map(lambda n: "x" * n),  # longer than NAME_MAX, then than PATH_MAX
    st.sampled_from(["..", ".", "\x00", "a\x00b", "\udcff", "loop", "file", "locked"]),
)


@pytest.fixture(scope="module")
def base() -> Path:
    root = Path(tempfile.mkdtemp())
    (root / "loop").symlink_to(root / "loop")
    (root / "file").write_text("not a folder")
    (root / "locked").mkdir()
    (root / "locked" / "in").mkdir()
    os.chmod(root / "locked", 0)
    return root


@settings(max_examples=300, deadline=None)
@given(st.lists(COMPONENT, max_size=4), st.booleans())
def test_any_path_is_a_folder_or_invalid_params(base: Path, parts: list[str], absolute: bool) -> None:
    cwd = "/".join([str(base) if absolute else "", *parts]) if absolute else "/".join(parts)
    try:
        folder = client_folder(cwd)
    except RequestError as exc:
        assert exc.code == -32602
        assert "\n" not in str(exc) and len(str(exc)) < 400, str(exc)
    else:
        assert folder.is_absolute() and folder.is_dir()


@pytest.mark.parametrize(
    "cwd", ["/" + "a" * 300, "/tmp/" + "b" * 256 + "/c", "/" + "d/" * 3000, "/x\x00y", "", "rel"]
)
def test_the_reported_paths_are_invalid_params(cwd: str) -> None:
    with pytest.raises(RequestError) as raised:
        client_folder(cwd)
    assert raised.value.code == -32602
