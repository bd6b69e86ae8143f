"""A folder too wide to bound in-folder work is told by its structure (#42 F9).

The class: "in this folder" judged in a folder that is the system's or shared by every user (``/tmp``,
``/var/tmp``, ``/dev/shm``, ``/usr/local``, ``/etc/ssh``, ``/var/lib``, ``/run/user``, ``/mnt``, ``/media``,
``/srv``, ``/opt``): ``run`` in ``/var/tmp`` wrote ``/var/tmp/atk8e_marker`` unasked, because only an exact
list of names was too wide. The mechanism (``project.wide_folders``): the disk's root and the file system's
own layout, its system trees, world-writable folders, another user's and the home's holder are too wide
— generated over roots of each kind, and the projects inside them that are not.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.effects.reader import read_effects, too_wide
from freeact_tui.project.wide_folders import FHS_TOP, SYSTEM_TREES, why_too_wide
from freeact_tui.toolcalls import CodeAction

_NAME = st.text(alphabet="abcdefgh_-", min_size=1, max_size=8)
_SHARED_ROOTS = [r for r in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock") if os.path.isdir(r)]
_WRITE = "open('marker', 'w').write('x')"


@settings(max_examples=100, deadline=None)
@given(top=st.sampled_from(sorted(FHS_TOP)))
def test_every_folder_of_the_systems_own_layout_is_too_wide(top: str) -> None:
    root = os.path.realpath("/" + top)
    assert too_wide(root), root
    assert too_wide("/")


@settings(max_examples=100, deadline=None)
@given(tree=st.sampled_from(sorted(SYSTEM_TREES)), parts=st.lists(_NAME, min_size=1, max_size=3))
def test_every_folder_inside_a_system_tree_is_too_wide(tree: str, parts: list[str]) -> None:
    root = "/".join(["", tree, *parts])
    shared_above = any(
        os.path.isdir(a) and os.stat(a).st_mode & 0o002
        for a in ("/" + "/".join([tree, *parts[:k]]) for k in range(1, len(parts)))
    )
    assert too_wide(root) or shared_above, root


@settings(max_examples=40, deadline=None)
@given(shared=st.sampled_from(_SHARED_ROOTS), name=_NAME)
def test_a_shared_temp_root_is_too_wide_and_a_project_inside_it_is_not(shared: str, name: str) -> None:
    root = os.path.realpath(shared)
    assert too_wide(root)
    assert read_effects(CodeAction(_WRITE), Path(root)).effect_class != "in-folder"
    with tempfile.TemporaryDirectory(dir=root, prefix=name) as project:
        project = os.path.realpath(project)
        assert not too_wide(project), project
        assert read_effects(CodeAction(_WRITE), Path(project)).effect_class == "in-folder"


@settings(max_examples=30, deadline=None)
@given(mode=st.sampled_from([0o777, 0o1777, 0o773, 0o772]), name=_NAME)
def test_any_folder_every_user_may_write_to_is_too_wide(mode: int, name: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        shared = os.path.join(os.path.realpath(tmp), name)
        os.mkdir(shared)
        os.chmod(shared, mode)
        assert too_wide(shared)
        inner = os.path.join(shared, "project")
        os.mkdir(inner)
        assert not too_wide(inner)


def test_another_users_folder_is_too_wide_unless_the_app_runs_as_root(tmp_path: Path) -> None:
    root = os.path.realpath(tmp_path)
    owner = os.stat(root).st_uid
    assert why_too_wide(root, uid=owner) is None
    assert why_too_wide(root, uid=owner + 4242) == "a folder another user owns" or owner + 4242 == 0
    assert why_too_wide(root, uid=0) is None  # root owns nothing by ownership: the structure decides


def test_a_folder_that_holds_the_home_is_too_wide(tmp_path: Path) -> None:
    root = os.path.realpath(tmp_path)
    assert why_too_wide(root, home=os.path.join(root, "user")) == "a folder that holds the home folder"


@pytest.mark.parametrize(
    "root",
    ["/tmp", "/var/tmp", "/dev/shm", "/usr/local", "/etc/ssh", "/var/lib", "/run/user", "/mnt", "/media", "/srv", "/opt"],
)
def test_the_reported_folders(root: str) -> None:
    real = os.path.realpath(root)
    assert too_wide(real), root
    assert read_effects(CodeAction(_WRITE), Path(real)).effect_class != "in-folder"
