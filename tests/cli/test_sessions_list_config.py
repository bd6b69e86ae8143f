"""``sessions list`` finds the sessions dir without loading the config (pydantic) only where no file can
change it, and then finds the very dir the config loader finds; a plain listing imports no pydantic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from freeact_tui.cli.entry import plain_sessions_dir
from freeact_tui.project.config import load_config

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(the app's home, a working dir under the user's home); the test runs in the working dir."""
    home = tmp_path / "apphome"
    user_home = tmp_path / "user"
    work = user_home / "work"
    work.mkdir(parents=True)
    monkeypatch.setenv("FREEACT_TUI_HOME", str(home))
    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.chdir(work)
    return home, work


def test_no_files_gives_the_default_dir_as_the_config_does(places: tuple[Path, Path]) -> None:
    home, _ = places
    found = plain_sessions_dir(None)
    assert found == load_config(None).resolved_sessions_dir()
    assert found == (home / "data" / "sessions").absolute()


def test_a_user_config_that_does_not_name_the_dir_is_read_without_the_config_model(
    places: tuple[Path, Path],
) -> None:
    home, _ = places
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text('model = "openai:gpt-4o"\ntheme = "nord"\n')
    assert plain_sessions_dir(None) == load_config(None).resolved_sessions_dir()


@pytest.mark.parametrize(
    "setup",
    [
        "user_sessions_dir",
        "user_working_dir",
        "user_broken",
        "project_config",
        "freeact_project",
        "project_env",
    ],
)
def test_any_file_that_could_change_the_dir_leaves_it_to_the_config_loader(
    places: tuple[Path, Path], setup: str
) -> None:
    home, work = places
    (home / "config").mkdir(parents=True)
    user = home / "config" / "config.toml"
    match setup:
        case "user_sessions_dir":
            user.write_text(f'sessions_dir = "{work / "elsewhere"}"\n')
        case "user_working_dir":
            user.write_text(f'working_dir = "{work.parent}"\n')
        case "user_broken":
            user.write_text("model = \n")
        case "project_config":
            (work / ".freeact-tui.toml").write_text("")
        case "freeact_project":
            (work / ".freeact").mkdir()
        case "project_env":
            (work / ".env").write_text("X=1\n")
    assert plain_sessions_dir(None) is None
    assert plain_sessions_dir(work / "given.toml") is None


def test_a_plain_listing_imports_no_pydantic(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    code = (
        "import sys\nsys.argv = ['freeact-tui', 'sessions', 'list']\n"
        "from freeact_tui.cli import main\nmain()\n"
        "import json\nprint(json.dumps([m for m in ('pydantic', 'dotenv', 'freeact_tui.project.config') if m in sys.modules]))"
    )
    env = {
        **os.environ,
        "FREEACT_TUI_HOME": str(tmp_path / "home"),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
    }
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=work, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[-1]) == []
