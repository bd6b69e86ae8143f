"""The command line (the top layer): parses flags, loads the Config, starts the app or a subcommand.

- ``entry``: the console-script entry point ``main``; a plain ``sessions list`` is answered there
  without typer.
- ``main``: the typer app and its commands.
- ``options``: the options every command reads (choices, what each subcommand takes, session ids).
- ``run``: the headless ``run`` command.
- ``sessions``: ``freeact-tui sessions list|show|export|rm``; ``listing``: the session table;
  ``env_file``: the user's ``.env``, loaded first.

May import every other layer (``tui/``, ``agent/``, ``store/``, …); nothing imports it. Heavy layers
are imported inside the command that needs them, so that ``--version`` and ``--help`` stay fast;
typer itself is imported only when ``app`` or ``resolve_session_id`` is first used.
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
