"""The test session's own user directories: nothing a test runs may write into the real ones.

``IsolatedDirs()`` points HOME, the XDG base directories, Jupyter's and IPython's directories and the
app's ``FREEACT_TUI_HOME`` at one temporary directory per test process, before any test module is
imported (module-scoped fixtures start kernels and MCP servers before any function fixture runs,
and the kernel gateway inherits HOME, not the other variables). Each test still gets its own
``FREEACT_TUI_HOME`` from the ``isolated_home`` fixture.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

# Kept across processes (pytest-xdist workers inherit the isolated environment).
_REAL_HOME_ENV = "FREEACT_TUI_TESTS_REAL_HOME"

REAL_HOME = Path(os.environ.get(_REAL_HOME_ENV) or Path.home())

# Relative to the isolated root.
_LOCATIONS = {
    "HOME": "home",
    "XDG_DATA_HOME": "home/.local/share",
    "XDG_CONFIG_HOME": "home/.config",
    "XDG_CACHE_HOME": "home/.cache",
    "XDG_STATE_HOME": "home/.local/state",
    "JUPYTER_CONFIG_DIR": "home/.jupyter",
    "JUPYTER_DATA_DIR": "home/.local/share/jupyter",
    "JUPYTER_RUNTIME_DIR": "home/.local/share/jupyter/runtime",
    "IPYTHONDIR": "home/.ipython",
    "MPLCONFIGDIR": "home/.config/matplotlib",
    "FREEACT_TUI_HOME": "freeact-tui",
}


def real_user_dirs() -> list[Path]:
    """Where the app and Jupyter would write for the real user (what tests must leave alone)."""
    share = REAL_HOME / ".local" / "share"
    return [
        share / "freeact-tui",
        REAL_HOME / ".config" / "freeact-tui",
        REAL_HOME / ".cache" / "freeact-tui",
        share / "jupyter" / "runtime",
        REAL_HOME / ".ipython",
    ]


class IsolatedDirs:
    """The temporary user directories of this test process, set up at once; ``restore()`` undoes it."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="freeact-tui-tests-"))
        self._saved = {name: os.environ.get(name) for name in [*_LOCATIONS, _REAL_HOME_ENV]}
        os.environ[_REAL_HOME_ENV] = str(REAL_HOME)
        for name, relative in _LOCATIONS.items():
            path = self.root / relative
            path.mkdir(parents=True, exist_ok=True)
            os.environ[name] = str(path)

    def restore(self) -> None:
        for name, value in self._saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(self.root, ignore_errors=True)
