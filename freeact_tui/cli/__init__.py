"""The command line (the top layer): parses flags, loads the Config, starts the app or a subcommand.

- ``entry``: the console-script entry point ``main``; a launch with only the app's options and a
  plain ``sessions list`` are answered there without typer.
- ``app_options``: the app's options as data (their choices; the quick launch path's parser, checked
  against typer by a test); ``launch``: starting the app from the parsed options, without typer.
- ``main``: the typer app and its commands (the one definition of the options).
- ``options``: the options every command reads (what each subcommand takes, the typer declarations).
- ``run``: the headless ``run`` command.
- ``sessions``: ``freeact-tui sessions list|show|export|rm``; ``listing``: the session table;
  ``env_file``: the user's ``.env``, loaded first.

May import every other layer (``tui/``, ``agent/``, ``store/``, …); nothing imports it. Heavy layers
are imported inside the command that needs them, so that ``--version`` and ``--help`` stay fast;
typer itself is imported only when ``app`` or ``resolve_session_id`` is first used, or a command line
needs it.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from freeact_tui.cli.entry import main

if TYPE_CHECKING:
    from freeact_tui.cli.main import app, resolve_session_id


def __getattr__(name: str) -> Any:
    if name in ("app", "resolve_session_id"):
        return getattr(importlib.import_module("freeact_tui.cli.main"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value: object) -> None:
        # Importing the submodule ``cli.main`` sets it as this package's ``main``: the entry point stays.
        if name == "main" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

__all__ = ["app", "main", "resolve_session_id"]
