"""Tests run with temporary user directories: the app's and Jupyter's files never reach the real ones."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from IPython.paths import get_ipython_dir
from jupyter_core.paths import jupyter_config_dir, jupyter_data_dir, jupyter_runtime_dir
from platformdirs import PlatformDirs

from freeact_tui.project import paths
from tests.user_dirs import REAL_HOME, IsolatedDirs, real_user_dirs


def _isolated(path: Path | str, root: Path) -> bool:
    return Path(path).is_relative_to(root) and not Path(path).is_relative_to(REAL_HOME)


def test_the_app_writes_into_the_test_home(isolated_home: Path) -> None:
    for path in (
        paths.data_dir(),
        paths.config_dir(),
        paths.default_sessions_dir(),
        paths.permissions_file(),
    ):
        assert path.is_relative_to(isolated_home) and not path.is_relative_to(REAL_HOME), path


def test_user_dirs_point_into_the_session_root(user_dirs: IsolatedDirs) -> None:
    assert Path.home() == user_dirs.root / "home" != REAL_HOME
    app_dirs = PlatformDirs(paths.APP_NAME, appauthor=False)
    found = [
        jupyter_runtime_dir(), jupyter_data_dir(), jupyter_config_dir(), get_ipython_dir(),
        app_dirs.user_data_dir, app_dirs.user_config_dir, app_dirs.user_cache_dir, app_dirs.user_log_dir,
    ]  # fmt: skip
    for path in found:
        assert _isolated(path, user_dirs.root), path
    # The real places are what a leak would touch: none of them is inside the session root.
    assert not any(_isolated(path, user_dirs.root) for path in real_user_dirs())


def test_child_processes_inherit_them(user_dirs: IsolatedDirs) -> None:
    # A kernel gateway inherits only a few variables (HOME among them): its Jupyter dirs follow HOME.
    env = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"]}
    code = "from jupyter_core.paths import jupyter_runtime_dir; print(jupyter_runtime_dir())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert _isolated(out.stdout.strip(), user_dirs.root), out.stdout
