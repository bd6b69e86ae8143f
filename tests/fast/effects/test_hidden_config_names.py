"""Any hidden (dot-named) component is a tool's configuration, at any depth, but the few inert names
(issue #39, F2).

The class: host-run tool configuration outside the table of names (``.cargo/config.toml`` with a
``rustc-wrapper``, ``.hg/hgrc`` hooks, ``.mise.toml``, ``.devcontainer/``, ``.idea/``, ``.Rprofile``,
``.irbrc``, ``.gdbinit``, ``.tool-versions``, ``.python-version``, ``.pre-commit-config.yaml``,
``.bundle/config``, ``.lesskey``): in-folder work wrote them unasked, and the sandbox kept them. The
mechanism is structure, not a longer list: ``paths.configures_part`` counts every dot-name but
``INERT_DOT_NAMES``, and ``runs_later`` (the in-folder modes, ``effects:in-folder`` rules), the sandbox's
``planted.configures`` and a project's rules all ask it. Non-hidden build files stay the project's code.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.effects import read_effects
from freeact_tui.effects.modes import ApprovalMode, judge
from freeact_tui.execution.isolation.planted import configures
from freeact_tui.project.paths import INERT_DOT_NAMES, PROTECTED_NAMES, runs_later
from freeact_tui.project.policy import project_path_refusal
from freeact_tui.toolcalls import CodeAction, FileWrite

REPORTED = (
    ".cargo/config.toml", ".hg/hgrc", ".mise.toml", ".devcontainer/devcontainer.json", ".idea/workspace.xml",
    ".Rprofile", ".irbrc", ".gdbinit", ".tool-versions", ".python-version", ".pre-commit-config.yaml",
    ".bundle/config", ".lesskey",
)  # fmt: skip
_DIR = st.text("abcdefghijklmnopqrstuvwxyz_-0123456789", min_size=1, max_size=8)
_DOT_NAME = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.", min_size=1, max_size=12).map(
    lambda rest: "." + rest
).filter(lambda name: name not in (".", "..") and name.lower() not in INERT_DOT_NAMES)


def _asked_everywhere(path: str, tmp_path: Path) -> None:
    assert runs_later(path), path
    assert configures(path) or path.split("/")[0] in PROTECTED_NAMES, path  # the sandbox binds those itself
    assert project_path_refusal(path) is not None, path
    for mode in (ApprovalMode.IN_FOLDER, ApprovalMode.SANDBOXED_AUTO):
        assert judge(mode, FileWrite(path, "x"), None, rule=None, sandboxed=False, working_dir=tmp_path) is None
    assert read_effects(CodeAction(f"open({path!r}, 'w').write('x')"), tmp_path).effect_class is None, path


@pytest.mark.parametrize("path", [*REPORTED, *(f"sub/dir/{p}" for p in REPORTED)])
def test_each_reported_name_is_never_in_folder_work(path: str, tmp_path: Path) -> None:
    _asked_everywhere(path, tmp_path)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=_DOT_NAME,
    above=st.lists(_DIR, max_size=3),
    below=st.lists(_DIR, max_size=2),
)
def test_a_random_dot_name_at_any_depth_runs_later(name: str, above: list[str], below: list[str], tmp_path: Path) -> None:
    _asked_everywhere("/".join([*above, name, *below]), tmp_path)


@pytest.mark.parametrize("name", sorted(INERT_DOT_NAMES))
def test_an_inert_name_stays_in_folder_work(name: str, tmp_path: Path) -> None:
    """The allow-list is real: ``.gitignore`` and the caches tools write as they run are ordinary files."""
    path = f"sub/{name}" if name.endswith("ignore") or "." in name[1:] else f"sub/{name}/data"
    assert not runs_later(path), path
    assert not configures(path), path


@pytest.mark.parametrize("name", ["package.json", "Justfile", "Taskfile.yml", "Makefile.am", "data/notes.txt"])
def test_non_hidden_build_files_stay_the_projects_code(name: str) -> None:
    """``package.json``, ``Justfile``: the project's code, run by the user explicitly (documented)."""
    assert not runs_later(name)
