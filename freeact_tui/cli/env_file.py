"""The user's own ``.env``, loaded before any command runs (by the typer app and by the quick path)."""

from __future__ import annotations

from pathlib import Path


def load_env_file() -> Path | None:
    """Load the nearest ``.env`` from the working directory up, as freeact does, when it is the user's
    own (in the home directory or above); a project's ``.env`` is never loaded into the process: once the
    folder is trusted it is read into ``Config.project_env`` (``project.project_env``).

    Variables already set in the environment win; nothing is written anywhere.

    Returns:
        The file that was read, if any.
    """
    cwd = Path.cwd()
    if not any((directory / ".env").is_file() for directory in (cwd, *cwd.parents)):
        return None  # the common case, answered without importing dotenv
    from dotenv import find_dotenv, load_dotenv

    from freeact_tui.project.trust import project_env_file

    found = find_dotenv(usecwd=True)
    if not found or project_env_file(Path.cwd().resolve()) is not None:
        return None
    load_dotenv(found, override=False)
    return Path(found)


__all__ = ["load_env_file"]
