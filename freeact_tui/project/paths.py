"""Platform paths: every file location the app uses is derived here (platformdirs)."""

from __future__ import annotations

import importlib.machinery
import os
import re
import tempfile
from pathlib import Path
from typing import NamedTuple

from platformdirs import PlatformDirs

APP_NAME = "freeact-tui"
_dirs = PlatformDirs(APP_NAME, appauthor=False)

# Tests and power users may relocate everything with one variable.
_HOME_ENV = "FREEACT_TUI_HOME"

PROJECT_CONFIG_NAME = ".freeact-tui.toml"
FREEACT_DIR_NAME = ".freeact"  # a freeact project keeps config, skills and sessions here

PROTECTED_NAMES: tuple[str, ...] = (
    ".git",
    FREEACT_DIR_NAME,
    ".agents",
    PROJECT_CONFIG_NAME,
    ".env",
    "AGENTS.md",
)
"""The names in a working directory that configure the app, hold its secrets or name programs that
git runs: what the app reads from a project, and what code in the sandbox may never create, change or
replace, whether or not it exists."""


IMPORTABLE_SUFFIXES: tuple[str, ...] = (*importlib.machinery.all_suffixes(), ".pth")
"""The endings of files Python imports (sources, bytecode, extensions) or runs at start-up (``.pth``):
a later cell's import finds the working folder's modules (``execution.kernel.folder_imports``: the cell's own
imports, never a library's), so it may find and run such a file."""


class Configures(NamedTuple):
    """A file of the working folder that configures code: why, and the modules that read it from there."""

    why: str
    read_by: tuple[str, ...] = ()
    """Top-level modules that read the file from the working folder while a cell runs (on import or on
    use): a cell using one of them, while the folder holds the file, runs what the file says."""


CONFIGURES_CODE: dict[str, Configures] = {
    "matplotlibrc": Configures(
        "matplotlib reads it from the working folder at import: backend, programs (LaTeX)",
        ("matplotlib", "pandas"),
    ),
    ".matplotlib": Configures("matplotlib's configuration folder when the home is the working folder"),
    "pyproject.toml": Configures(
        "pytest, and build tools, read their configuration from it (plugins, options)", ("pytest", "_pytest")
    ),
    "setup.cfg": Configures("pytest and distutils read their configuration from it", ("pytest", "_pytest")),
    "pytest.ini": Configures(
        "pytest's configuration: plugins it imports, options it runs with", ("pytest", "_pytest")
    ),
    ".pytest.ini": Configures(
        "pytest's configuration: plugins it imports, options it runs with", ("pytest", "_pytest")
    ),
    "tox.ini": Configures("pytest reads its configuration from it", ("pytest", "_pytest")),
    "conftest.py": Configures("pytest imports it from every folder it collects", ("pytest", "_pytest")),
    ".coveragerc": Configures(
        "coverage (a pytest plugin) reads it: plugins it imports", ("coverage", "pytest_cov")
    ),
    "site.cfg": Configures("numpy's build configuration"),
    ".numpy-site.cfg": Configures("numpy's build configuration"),
    ".pdbrc": Configures("pdb runs its lines as commands when a debugger starts", ("pdb", "ipdb", "bdb")),
    ".pythonrc": Configures("an interactive Python's start-up file"),
    ".pythonrc.py": Configures("an interactive Python's start-up file"),
    ".ipython": Configures("IPython's profile folder: start-up files it runs"),
    "ipython_config.py": Configures("IPython's configuration: code it runs at start"),
    ".jupyter": Configures("Jupyter's configuration folder"),
    ".gitattributes": Configures("names the filters and diff programs git runs on the folder's files"),
    ".gitmodules": Configures("names the repositories and commands git's submodules use"),
    ".envrc": Configures("direnv runs it as a shell script whenever a shell enters the folder"),
    ".vscode": Configures("editors run the tasks, debuggers and interpreters its settings name"),
    ".mcp.json": Configures("coding agents start the MCP server commands it names"),
}
"""Names in the working folder that configure code the kernel or the tools it starts run later
(a library, its test runner, the debugger, the interpreter, git), with why: writing one changes what
later cells do, so no effect class allows it (as ``PROTECTED_NAMES`` and ``IMPORTABLE_SUFFIXES``); one
the folder already holds makes a cell that uses a module reading it "cannot tell" (``effects.reader``)."""


def runs_later(relative: str) -> bool:
    """Whether writing ``relative`` (a path inside the working folder) changes what later runs unasked:
    a name that configures git or the app (``PROTECTED_NAMES``) or code the kernel runs
    (``CONFIGURES_CODE``), anywhere in the path, or code the kernel may import (``helper.py``,
    ``pandas.pyc``, ``x.so``, ``pkg/__init__.py``, ``x.pth``)."""
    parts = relative.split(os.sep)
    return (
        any(part in PROTECTED_NAMES or part.lower() in CONFIGURES_CODE for part in parts)
        or parts[-1].lower().endswith(IMPORTABLE_SUFFIXES)
    )


def configures_tools(relative: str) -> bool:
    """Whether ``relative`` (a path inside the working folder) has a dot-named part: by convention, a tool's
    configuration (``.claude/settings.json``, ``.lfsconfig``, ``.mise.toml``, ``.cargo/config.toml``,
    ``.venv/bin/python``, ``.python-version``), which tools read and act on (run commands, pick interpreters)
    outside any reading. Never work the in-folder mode vouches for (``effects.reader``, ``effects.modes``);
    the sandbox's guard of planted names and the bound of project rules keep their own narrower tables
    (``runs_later``): the sandbox runs ordinary work that writes ``.gitignore`` and undoes nothing of it."""
    return any(part.startswith(".") and part not in (".", "..") for part in relative.split(os.sep))


def _home() -> Path | None:
    value = os.environ.get(_HOME_ENV)
    return Path(value).expanduser() if value else None


def config_dir() -> Path:
    """Directory of the user config file, permissions and user themes."""
    home = _home()
    return home / "config" if home else Path(_dirs.user_config_dir)


def data_dir() -> Path:
    """Directory of user data (sessions by default)."""
    home = _home()
    return home / "data" if home else Path(_dirs.user_data_dir)


def user_config_file() -> Path:
    return config_dir() / "config.toml"


def permissions_file() -> Path:
    return config_dir() / "permissions.json"


def user_themes_dir() -> Path:
    return config_dir() / "themes"


def state_file() -> Path:
    """Small UI state that persists (prompt history, last theme if not in config)."""
    return data_dir() / "state.json"


def default_sessions_dir() -> Path:
    return data_dir() / "sessions"


def exports_dir() -> Path:
    """Where ``/export`` without a path writes (not the project, where git would see the file)."""
    return data_dir() / "exports"


def find_freeact_project(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` that holds a freeact project (``.freeact/``).

    The search stops below the home directory: a ``~/.freeact`` counts only when ``start`` is home
    itself, so a user-level freeact dir does not capture every project under home.
    """
    start = start.expanduser().absolute()
    home = Path.home().absolute()
    for directory in (start, *start.parents):
        if directory == home and directory != start:
            return None
        if (directory / FREEACT_DIR_NAME).is_dir():
            return directory
    return None


def checkpoints_dir() -> Path:
    """Shadow git repositories of checkpoints, one per working directory."""
    return data_dir() / "checkpoints"


def bundled_themes_dir() -> Path:
    """Themes shipped with the package (``themes/`` in a checkout)."""
    here = Path(__file__).resolve().parents[1]
    installed = here / "_themes"
    if installed.is_dir():
        return installed
    return here.parent / "themes"


def atomic_write_text(path: Path, text: str, mode: int = 0o600) -> None:
    """Write ``text`` to ``path`` atomically (temp file in the same dir + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def log_tail(log: Path | None, offset: int, lines: int = 5) -> str:
    """The last non-empty lines written to ``log`` after byte ``offset`` ("" if unreadable)."""
    if log is None:
        return ""
    try:
        with log.open("rb") as fh:
            fh.seek(offset)
            text = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join([line for line in text.splitlines() if line.strip()][-lines:])


_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def safe_file_name(name: str) -> str:
    """``name`` with every character outside ``[A-Za-z0-9_-]`` replaced by ``_``."""
    return _UNSAFE_NAME_CHARS.sub("_", name)


def mcp_log_file(log_dir: Path, server: str) -> Path:
    """Where a stdio MCP server's stderr is appended: ``<log_dir>/mcp-<server>.log``."""
    return log_dir / f"mcp-{safe_file_name(server)}.log"
