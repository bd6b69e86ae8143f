"""What a sandboxed action writes to names that configure code, at any depth, is undone (#39, F5).

Class: protected names were protected only at the top of the folder (the sandbox binds them there);
sandboxed code planted ``sub/.git/config`` (``core.fsmonitor``), ``sub/.gitattributes``, ``.envrc``,
``.vscode/settings.json``, ``.mcp.json``, ``evil.pth``, ``sub/AGENTS.md`` … for the host's next git,
shell or editor. Mechanism: ``planted.PlantGuard`` records every path below one table name
(``paths.PROTECTED_NAMES`` + ``paths.CONFIGURES_CODE``, ``.pth``) before each sandboxed action and puts
them back after it. Generated nested paths of the table's names: each is undone, other files stay.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.execution.isolation.planted import PlantGuard, configures
from freeact_tui.project.paths import CONFIGURES_CODE, PROTECTED_NAMES

_NAMES = sorted({*PROTECTED_NAMES, *CONFIGURES_CODE, "evil.pth"})
_DIR = st.text("abcdefghijklmnopqrstuvwxyz_-", min_size=1, max_size=6).filter(lambda d: d not in PROTECTED_NAMES)
_BELOW = st.sampled_from(["", "/config", "/hooks/pre-commit", "/settings.json", "/info/attributes"])


def _tree(root: Path) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for top, dirs, files in os.walk(root):
        for name in dirs:
            out[os.path.relpath(os.path.join(top, name), root)] = None
        for name in files:
            out[os.path.relpath(os.path.join(top, name), root)] = Path(top, name).read_bytes()
    return out


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir():
        path = path / "planted"
    path.write_text(text)


def test_the_reported_plants_are_undone(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "keep.py").write_text("x = 1\n")
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "settings.json").write_text("{}\n")
    before = _tree(tmp_path)
    guard = PlantGuard(tmp_path)
    plants = ["sub/.git/config", "sub/.git/hooks/post-checkout", "sub/.gitattributes", "sub/.gitmodules", ".envrc",
              "sub/.mcp.json", "ipython_config.py", "evil.pth", "sub/.env", "sub/AGENTS.md", "sub/.freeact/config.toml",
              "a/b/.vscode/tasks.json"]  # fmt: skip
    for rel in plants:
        _write(tmp_path, rel, "[core]\n\tfsmonitor = touch /tmp/pwned\n")
    (tmp_path / ".vscode" / "settings.json").write_text('{"python.defaultInterpreterPath": "/tmp/evil"}\n')
    (tmp_path / "out.txt").write_text("ordinary work\n")
    notice = guard.finish()
    assert notice is not None and "sub/.git" in notice and ".vscode/settings.json" in notice
    after = _tree(tmp_path)
    assert after.pop("out.txt") == b"ordinary work\n"  # ordinary work stays
    files = {k: v for k, v in after.items() if v is not None}
    assert files == {k: v for k, v in before.items() if v is not None}  # (empty folders on the way may stay)
    assert not (tmp_path / "sub" / ".git").exists()


def test_an_action_that_touches_no_such_name_says_nothing(tmp_path: Path) -> None:
    guard = PlantGuard(tmp_path)
    (tmp_path / "data.csv").write_text("a,b\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("x = 1\n")
    assert guard.finish() is None


def test_the_top_level_names_the_sandbox_binds_are_left_to_it() -> None:
    assert not configures(".freeact/sessions/x/main.jsonl") and not configures(".git/index")
    assert configures("sub/.git/config") and configures("sub/.git/modules/m/config")
    assert not configures("sub/.git/index") and not configures("sub/.git/HEAD")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    plants=st.lists(
        st.tuples(st.lists(_DIR, max_size=3), st.sampled_from(_NAMES), _BELOW), min_size=1, max_size=5
    ),
    existing=st.booleans(),
)
def test_every_generated_nested_plant_is_undone(
    plants: list[tuple[list[str], str, str]], existing: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "work.txt").write_text("before\n")
        if existing:  # names that were there already are put back as they were
            _write(root, "sub/.envrc", "export A=1\n")
            _write(root, "sub/.git/config", "[core]\n\tbare = false\n")
        before = _tree(root)
        guard = PlantGuard(root)
        for dirs, name, below in plants:
            rel = "/".join([*dirs, name]) + below
            if rel.split("/")[0] in PROTECTED_NAMES:
                rel = "nested/" + rel  # the top-level ones are bound read-only by the sandbox itself
            try:
                _write(root, rel, "planted\n")
            except (NotADirectoryError, FileExistsError, IsADirectoryError):
                continue  # a generated path that runs into a file made before
        (root / "work.txt").write_text("after\n")
        notice = guard.finish()
        after = _tree(root)
        assert after.pop("work.txt") == b"after\n"
        before.pop("work.txt")
        leftovers = {rel for rel in after if rel not in before and not any(
            before_rel.startswith(rel + "/") for before_rel in before)}  # fmt: skip
        # what is left is only directories made on the way to a table name (empty now)
        assert all(after[rel] is None for rel in leftovers), (leftovers, notice)
        assert {k: v for k, v in after.items() if v is not None} == {k: v for k, v in before.items() if v is not None}


def test_nothing_is_put_back_through_a_folder_swapped_for_a_symlink(tmp_path: Path) -> None:
    root, outside = tmp_path / "work", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "sub" / ".envrc").write_text("export MINE=1\n")
    guard = PlantGuard(root)
    (root / "sub" / ".envrc").unlink()
    (root / "sub").rmdir()
    (root / "sub").symlink_to(outside)  # the action swaps the folder for a link out of it
    notice = guard.finish()
    assert notice is not None and "NOT undone" in notice and "sub/.envrc" in notice
    assert list(outside.iterdir()) == []  # nothing written out of the folder
