"""The console script's entry point. ``sessions list`` in its plain forms is answered here without
typer (its import and parsing are a third of the command's time); every other command line, and any
``sessions list`` this does not take apart with certainty, goes to the typer app (``cli.main``)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ListArgs:
    """The options of ``sessions list`` (as ``cli.sessions.list_sessions`` takes them)."""

    limit: int = 20
    show_all: bool = False
    full_ids: bool = False
    sessions_dir: Path | None = None
    config: Path | None = None


_FLAGS = {"--all": "show_all", "-a": "show_all", "--full-ids": "full_ids"}
_VALUED = {"--limit": "limit", "-n": "limit", "--sessions-dir": "sessions_dir", "--config": "config"}


def quick_list_args(argv: list[str]) -> ListArgs | None:
    """The options of ``sessions list …`` in ``argv`` (without the program); ``None`` for anything else:
    other commands, ``--help``, bad values, repeated or combined options (typer answers those)."""
    if argv[:2] != ["sessions", "list"]:
        return None
    given: dict[str, object] = {}
    parsed: object
    words = iter(argv[2:])
    for word in words:
        name, eq, value = word.partition("=")
        if word in _FLAGS:
            key, parsed = _FLAGS[word], True
        elif name in _VALUED and (not eq or name.startswith("--")):
            value = value if eq else next(words, "")
            if not value or value.startswith("-"):
                return None
            key = _VALUED[name]
            if key == "limit":
                if not (value.isascii() and value.isdigit()) or int(value) < 1:
                    return None
                parsed = int(value)
            else:
                parsed = Path(value)
        else:
            return None
        if key in given:
            return None
        given[key] = parsed
    return ListArgs(**given)  # type: ignore[arg-type]


def quick_sessions_list(args: ListArgs) -> bool:
    """Print the listing; False when the config cannot be loaded (typer then reports it as always)."""
    from freeact_tui.cli.listing import print_sessions
    from freeact_tui.config import ConfigError, load_config

    if args.sessions_dir is not None:
        root = args.sessions_dir
    else:
        try:
            root = load_config(args.config).resolved_sessions_dir()
        except ConfigError:
            return False
    # As SessionStore takes its root: absolute, ``~`` expanded.
    print_sessions(
        root.expanduser().absolute(), limit=args.limit, show_all=args.show_all, full_ids=args.full_ids
    )
    return True


def main() -> None:
    """Console script entry point."""
    args = quick_list_args(sys.argv[1:])
    if args is not None:
        from freeact_tui.cli.env_file import load_env_file

        try:
            load_env_file()
            if quick_sessions_list(args):
                return
        except KeyboardInterrupt:
            sys.exit(130)
    from freeact_tui.cli.main import main as typer_main

    typer_main()


__all__ = ["ListArgs", "main", "quick_list_args"]
