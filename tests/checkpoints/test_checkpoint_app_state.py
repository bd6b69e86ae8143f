"""Undo never rewrites the app's own state (#42 F5): in a folder that holds it (``FREEACT_TUI_HOME`` inside
the working folder, ``~/.config`` holding ``~/.config/freeact-tui``) its rules, trust and sessions are kept
out of every checkpoint; in a folder that is the app's own state checkpoints are off."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from freeact_tui.checkpoints.actions import ActionCheckpoints
from freeact_tui.project import paths
from freeact_tui.project.config import Config


@pytest.fixture
def home_in_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("FREEACT_TUI_HOME", str(work / "H"))
    paths.config_dir().mkdir(parents=True)
    return work


async def test_the_apps_state_in_the_folder_is_never_checkpointed(home_in_work: Path) -> None:
    rules = paths.permissions_file()
    rules.write_text('{"allow": []}')
    (home_in_work / "notes.txt").write_text("a")
    hook = ActionCheckpoints.from_config(Config(working_dir=home_in_work))
    first = await hook.before_action("before action 1")
    assert first is not None and hook.store is not None
    rules.write_text('{"allow": [{"kind": "*", "pattern": "*"}]}')
    (home_in_work / "notes.txt").write_text("b")
    changed = [c.path for c in await hook.store.changes(first)]
    assert changed == ["notes.txt"], changed  # the rules file is not the folder's: undo leaves it alone


async def test_checkpoints_are_off_in_a_folder_of_the_apps_state(home_in_work: Path) -> None:
    hook = ActionCheckpoints.from_config(Config(working_dir=paths.config_dir()))
    assert not hook.enabled and "this app's own settings" in (hook.disabled_reason or "")
    assert await hook.before_action("x") is None
    assert os.listdir(paths.config_dir()) == []
