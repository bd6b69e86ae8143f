"""A freeact project may choose where images go (freeact 0.11's ``[agent] images_dir``), but only inside its
own folder: the value is resolved through every symlink by the one path resolver, and one that leads out
of the folder (or into ``.git``/``.freeact``) is refused and named under "Never applied" in the trust
dialog (issue #39)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from freeact_tui.project import paths, trust
from freeact_tui.project.config import load_config
from freeact_tui.project.policy import project_layer
from freeact_tui.project.review import review


def _freeact_project(folder: Path, images_dir: str) -> None:
    (folder / ".freeact").mkdir(parents=True, exist_ok=True)
    (folder / ".freeact" / "config.toml").write_text(
        f"[agent]\nimages_dir = {images_dir!r}\n".replace("'", '"')
    )


@pytest.mark.parametrize("value", ["images", "out/figures", "./images/../pics"])
def test_a_freeact_projects_images_dir_inside_it_applies(tmp_path: Path, value: str) -> None:
    folder = (tmp_path / "clone").resolve()
    _freeact_project(folder, value)
    state = trust.check(folder)
    assert f"images_dir = '{folder / os.path.normpath(value)}'" in review(state).text()
    config = load_config(cwd=folder, trust_project=True)
    assert config.images_dir == folder / os.path.normpath(value)
    assert not [n for n in config.notices if "images_dir" in n]


def test_the_tui_config_may_set_it_inside_too(tmp_path: Path) -> None:
    folder = tmp_path.resolve()
    (folder / paths.PROJECT_CONFIG_NAME).write_text('images_dir = "shots"\n')
    assert load_config(cwd=folder, trust_project=True).images_dir == folder / "shots"


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("/elsewhere/img", "outside the project folder"),
        ("../sibling", "outside the project folder"),
        ("~/Pictures", "outside the project folder"),
        ("link/inner", "outside the project folder"),  # link -> a folder outside
        (".git/hooks", "leads into .git"),
        (".freeact/generated", "leads into .freeact"),
        ("loop/x", "symlink loop"),
    ],
)
def test_an_images_dir_leading_elsewhere_is_refused_and_named(tmp_path: Path, value: str, why: str) -> None:
    folder, outside = (tmp_path / "clone").resolve(), (tmp_path / "outside").resolve()
    outside.mkdir()
    _freeact_project(folder, value)
    (folder / "link").symlink_to(outside)
    (folder / "loop").symlink_to(folder / "loop")
    never = review(trust.check(folder)).text().split("Never applied, even if trusted:")[-1]
    assert "images_dir" in never and why in never
    config = load_config(cwd=folder, trust_project=True)
    assert config.images_dir is None
    assert any("images_dir" in n and why in n for n in config.notices), config.notices


_NAMES = st.sampled_from(["a", "b", "img", "..", ".", ".git", "l1", "l2"])


@settings(max_examples=150, deadline=None)
@given(
    value=st.lists(_NAMES, min_size=1, max_size=5).map("/".join),
    links=st.lists(
        st.tuples(
            st.sampled_from(["l1", "a/l2", "b/l1"]),
            st.sampled_from([".", "..", "a", "b/a", "../outside", "/", "a/l2", "l1", ".git"]),
        ),
        max_size=3,
        unique_by=lambda link: link[0],
    ),
)
def test_kept_exactly_when_the_real_path_is_inside_and_unprotected(
    value: str, links: list[tuple[str, str]]
) -> None:
    """Against the operating system's own realpath, over generated trees of relative symlinks."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "p").resolve()
        for directory in ("a", "b", "b/a", ".git"):
            (root / directory).mkdir(parents=True)
        Path(tmp, "outside").mkdir()
        for name, target in links:
            (root / name).symlink_to(target)
        notices: list[str] = []
        out = project_layer({"images_dir": value}, str(root / ".freeact" / "config.toml"), notices)
        real = Path(os.path.realpath(root / value))
        try:
            relative = real.relative_to(root)
        except ValueError:
            expected_kept = False
        else:
            expected_kept = ".git" not in relative.parts
        loop = any("symlink loop" in n for n in notices)
        if loop:  # the OS gives up on a loop as well: nothing can be said, so it is refused
            assert "images_dir" not in out
        else:
            assert ("images_dir" in out) == expected_kept, (value, links, notices)
        event("kept" if "images_dir" in out else "refused")
        if "images_dir" in out:
            assert out["images_dir"] == str(real)
        else:
            assert len(notices) == 1 and "images_dir" in notices[0]
