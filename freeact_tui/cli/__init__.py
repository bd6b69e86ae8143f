"""The command line (the top layer): parses flags, loads the Config, starts the app or a subcommand.

- ``main``: the app and its commands, and the console-script entry point ``main``.
- ``options``: the options every command reads (choices, what each subcommand takes, session ids).
- ``run``: the headless ``run`` command.
- ``sessions``: ``freeact-tui sessions list|show|export|rm``.

May import every other layer (``tui/``, ``agent/``, ``store/``, …); nothing imports it. Heavy layers
are imported inside the command that needs them, so that ``--version`` and ``--help`` stay fast.
"""

from freeact_tui.cli.main import app, main, resolve_session_id

__all__ = ["app", "main", "resolve_session_id"]
