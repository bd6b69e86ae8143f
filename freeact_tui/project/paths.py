"""Platform paths: every file location the app uses is derived here (platformdirs)."""

from __future__ import annotations

import importlib.machinery
import os
import re
import tempfile
from pathlib import Path
from typing import NamedTuple

from platformdirs import PlatformDirs

from freeact_tui.filenames import fold, folded

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
    "sitecustomize.py": Configures(
        "Python imports it at start-up from any folder on its path (an editable install puts src/ there)"
    ),
    "usercustomize.py": Configures("Python imports it at start-up from any folder on its path"),
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


_PROTECTED_KEYS = folded(PROTECTED_NAMES)
_CONFIGURES_KEYS: dict[str, str] = {fold(name): name for name in CONFIGURES_CODE}
_IMPORTABLE_KEYS = tuple(fold(suffix) for suffix in IMPORTABLE_SUFFIXES)


def is_protected(name: str) -> bool:
    """Whether the file name ``name`` may be one of ``PROTECTED_NAMES`` (``.GIT``, ``AGENTS.MD``, ``.env.``:
    ``filenames.fold``, the one name comparison)."""
    return fold(name) in _PROTECTED_KEYS


def configuring(name: str) -> str | None:
    """The name of ``CONFIGURES_CODE`` the file name ``name`` may be (``Pytest.INI``: ``pytest.ini``), or
    ``None`` (``filenames.fold``)."""
    return _CONFIGURES_KEYS.get(fold(name))


def importable(name: str) -> bool:
    """Whether the file name ``name`` may end with one of ``IMPORTABLE_SUFFIXES`` (``x.PY``, ``x.pth.``)."""
    return fold(name).endswith(_IMPORTABLE_KEYS)


def controlling_part(parts: list[str]) -> str | None:
    """The first of ``parts`` (a path's names) that configures git, the app, a tool or code run later
    (``configures_part``), or ``None``."""
    return next((part for part in parts if configures_part(part)), None)


INERT_DOT_NAMES: dict[str, str] = {
    ".gitignore": "a list of names git leaves untracked: no program, no option",
    ".gitkeep": "an empty placeholder that keeps a folder in git",
    ".keep": "an empty placeholder that keeps a folder in git",
    ".dockerignore": "a list of names a docker build leaves out of its context: no program",
    ".editorconfig": "indentation and line endings an editor uses: no program, no path",
    ".ds_store": "macOS Finder's view settings: no program",
    ".pytest_cache": "pytest's record of the last failures (JSON data), written by pytest as it runs",
    ".mypy_cache": "mypy's type cache (data), written by mypy as it runs",
    ".ruff_cache": "ruff's lint cache (data), written by ruff as it runs",
    ".hypothesis": "Hypothesis's example database (bytes of examples), written as tests run",
    ".ipynb_checkpoints": "Jupyter's saved copies of notebooks (data)",
}
"""The hidden names known to configure no program, each with why (compared folded, ``filenames.fold``): every other dot-named component is a
tool's configuration by convention (``hidden_config``)."""


_INERT_KEYS = folded(INERT_DOT_NAMES)


def hidden_config(part: str) -> bool:
    """Whether one path component is a hidden (dot-named) name a tool may read as its configuration.

    By convention a dot-name is a tool's: ``.cargo/config.toml`` (a rustc wrapper), ``.hg/hgrc`` (hooks),
    ``.mise.toml``, ``.devcontainer/``, ``.idea/``, ``.Rprofile``, ``.irbrc``, ``.gdbinit``,
    ``.tool-versions``, ``.pre-commit-config.yaml``, ``.bundle/config``, ``.lesskey`` — and the next tool's
    too. So every one counts but the few known to be inert (``INERT_DOT_NAMES``); ``.`` and ``..`` are not
    names. Non-hidden build files (``package.json``, ``setup.py``, ``Justfile``, ``noxfile.py``,
    ``tasks.py``) are not: they are the project's code, which the user runs explicitly, like any file the
    agent writes."""
    return part.startswith(".") and part not in (".", "..") and fold(part) not in _INERT_KEYS


def configures_part(part: str) -> bool:
    """Whether one path component configures git, the app or code run later: a protected name
    (``PROTECTED_NAMES``), a name of ``CONFIGURES_CODE``, or a hidden tool configuration (``hidden_config``).
    The one test of a component (``runs_later``, the sandbox's ``planted.configures``, a project's rules)."""
    return is_protected(part) or configuring(part) is not None or hidden_config(part)


def runs_later(relative: str) -> bool:
    """Whether writing ``relative`` (a path inside the working folder) changes what later runs unasked:
    a name that configures git, the app, a tool or code the kernel runs (``configures_part``: the
    protected names, ``CONFIGURES_CODE``, any hidden name but the inert ones), anywhere in the path, or
    code the kernel may import (``helper.py``, ``pandas.pyc``, ``x.so``, ``pkg/__init__.py``, ``x.pth``);
    each name compared as a file system may compare it (``filenames.fold``: ``.GIT/hooks/x``, ``Helper.PY``)."""
    parts = relative.replace(os.sep, "/").split("/")
    return controlling_part(parts) is not None or importable(parts[-1])


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


_LOG_TAIL_BYTES = 1024 * 1024


def log_tail(log: Path | None, offset: int, lines: int = 5) -> str:
    """The last non-empty lines written to ``log`` after byte ``offset`` ("" if unreadable)."""
    if log is None:
        return ""
    from freeact_tui.project import files as projectfiles  # files is below paths' callers, not above paths

    try:
        data = projectfiles.read_opened(log, start=offset, limit=_LOG_TAIL_BYTES, head=True).data
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace")
    return "\n".join([line for line in text.splitlines() if line.strip()][-lines:])


_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def safe_file_name(name: str) -> str:
    """``name`` with every character outside ``[A-Za-z0-9_-]`` replaced by ``_``."""
    return _UNSAFE_NAME_CHARS.sub("_", name)


def mcp_log_file(log_dir: Path, server: str) -> Path:
    """Where a stdio MCP server's stderr is appended: ``<log_dir>/mcp-<server>.log``."""
    return log_dir / f"mcp-{safe_file_name(server)}.log"
