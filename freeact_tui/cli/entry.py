"""The console script's entry point. A launch with only the app's own options in their plain forms
(``cli.app_options.quick_app_params``) and ``sessions list`` in its plain forms are answered here
without typer (its import and parsing are a fifth of the time to the first frame, a third of the
listing's); every other command line, and anything this does not take apart with certainty, goes to
the typer app (``cli.main``), which stays the one definition of the options.

A command line that starts the app with a local kernel has a spare kernel gateway
(``execution.spare_gateway``) spawned once the app's first frame is drawn: its boot then overlaps the
agent's. Whatever ends the command line, a spare nobody took is ended here."""

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


def starts_local_app(argv: list[str]) -> bool:
    """Whether ``argv`` (without the program) starts the app, in all likelihood with a local kernel.

    False for subcommands, ``--help``, ``--version``, ``--sandbox``, ``--execution`` other than
    ``local``, and anything the quick launch path does not take apart (a wrong guess costs only the
    spare's start).
    """
    params = app_params(argv)
    return params is not None and not params["sandbox"] and params["execution"] in (None, "local")


def app_params(argv: list[str]) -> dict[str, object] | None:
    """``cli.app_options.quick_app_params``, not even imported for a subcommand (``sessions list``)."""
    if argv and not argv[0].startswith("-"):
        return None
    from freeact_tui.cli.app_options import quick_app_params

    return quick_app_params(argv)


def plain_sessions_dir(config: Path | None) -> Path | None:
    """Where sessions live when no file can say otherwise, found without loading the config (pydantic).

    None, and the caller loads the config, when a file could change the answer or has to be checked:
    ``--config``, a user config that sets ``sessions_dir`` or ``working_dir`` or is not TOML, a project
    config or ``.env`` in or above the working dir, a freeact project (its ``.freeact/sessions``).
    """
    if config is not None:
        return None
    import tomllib

    from freeact_tui.project import paths
    from freeact_tui.project.trust import project_env_file

    user = paths.user_config_file()
    if user.exists():
        try:
            values = tomllib.loads(user.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return None
        if "sessions_dir" in values or "working_dir" in values:
            return None
    folder = Path.cwd().resolve()
    if (folder / paths.PROJECT_CONFIG_NAME).exists() or paths.find_freeact_project(folder) is not None:
        return None
    if project_env_file(folder) is not None:
        return None  # a project's .env is the config loader's to judge (the user's is loaded already)
    return paths.default_sessions_dir().expanduser().absolute()


def quick_sessions_list(args: ListArgs) -> bool:
    """Print the listing; False when the config cannot be loaded (typer then reports it as always)."""
    from freeact_tui.cli.listing import print_sessions

    root = args.sessions_dir or plain_sessions_dir(args.config)
    if root is None:
        from freeact_tui.project.config import ConfigError, load_config

        try:
            root = load_config(args.config).resolved_sessions_dir()
        except ConfigError:
            return False
    # As SessionStore takes its root: absolute, ``~`` expanded.
    print_sessions(
        root.expanduser().absolute(), limit=args.limit, show_all=args.show_all, full_ids=args.full_ids
    )
    return True


_SUBCOMMANDS = frozenset({"run", "acp", "sessions", "init"})
_SESSION_ID_CHARS = frozenset("0123456789abcdefABCDEF-")


def resume_with_id(argv: list[str]) -> list[str]:
    """``--resume ID`` / ``-r ID`` (as Claude Code takes it) as ``--session-id ID``; ``--resume`` alone
    stays "the latest session here". ID is a session id or its prefix (hex digits and dashes)."""
    out = list(argv)
    for i, word in enumerate(out[:-1]):
        following = out[i + 1]
        if word in ("--resume", "-r") and following not in _SUBCOMMANDS and set(following) <= _SESSION_ID_CHARS:
            out[i : i + 2] = ["--session-id", following]
            break
    return out


PRINT_FLAGS = ("-p", "--print")
"""Claude Code's and Gemini CLI's "print the answer and exit": our ``run`` subcommand."""


def prompt_arguments(argv: list[str]) -> list[str]:
    """The first prompt as other agent terminals take it, in our forms: ``freeact-tui "PROMPT"`` (words
    that are no subcommand) is ``--prompt "PROMPT"`` (the app, the prompt sent once it is open);
    ``-p``/``--print`` anywhere before a subcommand is ``run`` (headless) with the same words, the app's
    options before it. Anything else is left as it is (typer answers it)."""
    from freeact_tui.cli.app_options import APP_OPTIONS

    valued = {flag for option in APP_OPTIONS if not option.is_flag for flag in option.flags}
    options: list[str] = []  # the app's options before -p (or all of them)
    words: list[str] = []  # the prompt's words
    after_print: list[str] | None = None
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            words += argv[i + 1 :]
            break
        if word in PRINT_FLAGS:
            after_print = argv[i + 1 :]  # run's own options and the prompt, as `run` takes them
            break
        if word.startswith("-") and len(word) > 1:
            options.append(word)
            if word in valued and i + 1 < len(argv):
                options.append(argv[i + 1])
                i += 1
        elif not words and word in _SUBCOMMANDS:
            return argv  # a subcommand: its own words
        else:
            words.append(word)
        i += 1
    if after_print is not None:
        return [*options, "run", *after_print, *words]
    if not words:
        return argv
    return [*options, "--prompt", " ".join(words)]


def main() -> None:
    """Console script entry point."""
    sys.argv[1:] = prompt_arguments(resume_with_id(sys.argv[1:]))
    params = app_params(sys.argv[1:])
    if params is not None:
        from freeact_tui import typeahead
        from freeact_tui.timeline import mark

        typeahead.hold()  # keys typed while the app starts arrive as typed (Enter sends)
        mark("entry:hold")
    if starts_local_app(sys.argv[1:]):
        from freeact_tui.execution.deferred_imports import defer_mcpygen_init, defer_rfc3987_syntax
        from freeact_tui.execution.kernel import spare_gateway

        # Whatever imports them first (the tool server, MCP API generation) loads only what it uses.
        defer_rfc3987_syntax()
        defer_mcpygen_init()
        try:
            _main(params)
        finally:
            spare_gateway.discard()  # not taken (another execution mode, an error): nothing is left
        return
    _main(params)


def _main(params: dict[str, object] | None) -> None:
    if params is not None:  # only the app's own options: started without typer
        import gc

        # Until the first frame is drawn (``launch.start_app`` turns it back on), no cyclic garbage
        # collection: start-up only allocates (imports, widgets), and its collections each walk
        # every object made so far (a tenth of the time to the first frame, for nothing to free).
        gc.disable()
        from freeact_tui.cli.launch import launch_app, prepare_process
        from freeact_tui.timeline import mark

        mark("cli:main")
        try:
            prepare_process()
            launch_app(params)
        except KeyboardInterrupt:
            sys.exit(130)
        finally:
            gc.enable()
        return
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


__all__ = ["ListArgs", "main", "prompt_arguments", "quick_list_args", "resume_with_id", "starts_local_app"]
