"""The app's options: ``freeact-tui [options]`` starts the app, ``freeact-tui sessions …`` manages sessions.

Options given before a subcommand apply to it, or are refused with a clear error
(``cli.options.SUBCOMMAND_OPTIONS``). Only typer is imported up front, so that ``--version`` and ``--help`` are
fast; the config, the store and the app are imported by the command that needs them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from freeact_tui.cli.env_file import load_env_file
from freeact_tui.cli.exit_codes import exit_codes_help
from freeact_tui.cli.launch import launch_app, prepare_process, start_app, warn_if_insecure
from freeact_tui.cli.launch import log_to_file as _log_to_file
from freeact_tui.cli.launch import with_sandbox as _with_sandbox
from freeact_tui.cli.options import (
    SANDBOX_CONFIG_REFUSAL,
    BaseUrlOption,
    ConfigOption,
    ExecutionOption,
    LogLevel,
    ModelOption,
    OutputChoice,
    PromptOption,
    ProtocolOption,
    RemoteInsecureOption,
    ResumeOption,
    SandboxConfigOption,
    SandboxOption,
    SessionIdOption,
    SkipPermissionsOption,
    TrustOption,
    _fail,
    _prepare_subcommand,
    _version_callback,
    config_overrides,
    resolve_session_id,
)
from freeact_tui.cli.sessions import sessions_app

if TYPE_CHECKING:
    from freeact_tui.project.config import Config

app = typer.Typer(
    name="freeact-tui",
    help="A terminal home for a code-action AI agent.",
    add_completion=False,
    no_args_is_help=False,
    invoke_without_command=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def run(
    ctx: typer.Context,
    model: ModelOption = None,
    config_path: ConfigOption = None,
    session_id: SessionIdOption = None,
    resume: ResumeOption = False,
    skip_permissions: SkipPermissionsOption = False,
    execution: ExecutionOption = None,
    base_url: BaseUrlOption = None,
    remote_insecure: RemoteInsecureOption = False,
    action_protocol: ProtocolOption = None,
    trust_folder: TrustOption = False,
    sandbox: SandboxOption = False,
    sandbox_config: SandboxConfigOption = None,
    log_level: Annotated[
        LogLevel | None,
        typer.Option("--log-level", help="Level of the log file (logs/freeact-tui.log in the data dir)."),
    ] = None,
    prompt: PromptOption = None,
    version: Annotated[
        bool | None,
        typer.Option(
            "--version", callback=_version_callback, is_eager=True, help="Show the version and exit."
        ),
    ] = None,
) -> None:
    """Start the app (or run a subcommand)."""
    if ctx.invoked_subcommand is None:
        launch_app(ctx.params)  # the quick launch path (cli.entry) calls it with the same parameters
        return
    if sandbox_config is not None:
        raise _fail(SANDBOX_CONFIG_REFUSAL)
    execution = _with_sandbox(execution, sandbox)
    _prepare_subcommand(ctx, ctx.invoked_subcommand, config_path)
    # Options given before a subcommand apply to it (the subcommand's own options win).
    ctx.obj = {**ctx.params, "execution": execution}


def _trust_as_printed(folder: Path) -> None:
    """``--trust``: print what the folder's trust covers (the trust dialog's listing), then trust exactly
    that (the digests of what was printed: a file changed since is asked about again)."""
    from freeact_tui.project import trust
    from freeact_tui.project.review import review

    state = trust.check(folder)
    if state.trusted:
        return
    typer.echo(f"freeact-tui: --trust: trusting {state.folder} with:\n{review(state).text()}", err=True)
    try:
        trust.trust(state)
    except trust.TrustStoreError as exc:
        typer.echo(f"freeact-tui: {exc}", err=True)


def _echo_untrusted(config: Config) -> None:
    """Without a prompt to ask: say on stderr, in one line, which project files are ignored and why;
    or, when ``--trust`` trusted the folder just now, what it trusted: the trust dialog's listing."""
    from freeact_tui.project.trust import untrusted_notice

    state = config.trust_state
    if state is not None and state.granted:
        from freeact_tui.project.review import review

        typer.echo(f"freeact-tui: --trust: trusted {state.folder} with:\n{review(state).text()}", err=True)
    elif state is not None and not state.trusted:
        typer.echo(f"freeact-tui: {untrusted_notice(state)}", err=True)


@app.command("run", help=f"Run one request without the UI and print the answer (exit codes: {exit_codes_help()}).")
def run_headless(
    ctx: typer.Context,
    prompt: Annotated[
        str | None, typer.Argument(help="The request; text piped into stdin is appended to it.")
    ] = None,
    output_format: Annotated[
        OutputChoice,
        typer.Option("--output-format", "-o", help="text, json or stream-json (one event per line)."),
    ] = OutputChoice.text,
    allow: Annotated[
        list[str] | None,
        typer.Option("--allow", help="Allow actions matching [KIND:]PATTERN for this run (repeatable)."),
    ] = None,
    deny: Annotated[
        list[str] | None,
        typer.Option("--deny", help="Refuse actions matching [KIND:]PATTERN (repeatable; beats --allow)."),
    ] = None,
    max_turns: Annotated[
        int | None,
        typer.Option("--max-turns", min=1, help="The most model requests (exit code 3 when reached)."),
    ] = None,
    model: ModelOption = None,
    config_path: ConfigOption = None,
    session_id: SessionIdOption = None,
    resume: ResumeOption = False,
    skip_permissions: SkipPermissionsOption = False,
    execution: ExecutionOption = None,
    base_url: BaseUrlOption = None,
    remote_insecure: RemoteInsecureOption = False,
    action_protocol: ProtocolOption = None,
    trust_folder: TrustOption = False,
    sandbox: SandboxOption = False,
    sandbox_config: SandboxConfigOption = None,
    log_level: Annotated[LogLevel | None, typer.Option("--log-level", help="Level of the log file.")] = None,
) -> None:
    """Run one request without the UI and print the answer (exit codes: ``cli/exit_codes.py``)."""
    from freeact_tui.cli import run as headless
    from freeact_tui.project.config import ConfigError, load_config

    before: dict[str, object] = ctx.obj or {}
    session_id = session_id or before.get("session_id")  # type: ignore[assignment]
    resume = resume or bool(before.get("resume"))
    if session_id is not None and resume:
        raise _fail("use either --session-id or --resume, not both.", 1)
    if sandbox_config is not None:
        raise _fail(SANDBOX_CONFIG_REFUSAL, 1)
    log_level = log_level or cast("LogLevel | None", before.get("log_level"))
    overrides = config_overrides(before, {**ctx.params, "execution": _with_sandbox(execution, sandbox)})
    try:
        config = load_config(
            config_path or cast("Path | None", before.get("config_path")),
            overrides,
            trust_project=trust_folder or bool(before.get("trust_folder")),
        )
    except ConfigError as exc:
        raise _fail(str(exc), 1) from None
    _echo_untrusted(config)
    for notice in config.notices:
        typer.echo(f"freeact-tui: {notice}", err=True)
    if prompt is None and sys.stdin.isatty():
        # `freeact run` is freeact's interactive app: with no prompt at a terminal, start ours.
        start_app(
            config_path or cast("Path | None", before.get("config_path")),
            session_id,
            resume,
            overrides,
            log_level,
            trust_project=trust_folder or bool(before.get("trust_folder")),
        )
        return
    text = headless.read_prompt(prompt, sys.stdin)
    if not text.strip():
        raise _fail('no prompt: give one (freeact-tui run "PROMPT") or pipe it into stdin.', 1)
    try:
        chosen = resolve_session_id(config, session_id, resume)
    except SystemExit:  # said why; `run` exits 1 on any error
        raise typer.Exit(1) from None
    if chosen is not None:
        from freeact_tui.store.restored import launch_layer

        # The session's own model, protocol and base URL, for what the command line leaves open: a
        # config layer, a project's when the session is stored in the project (``store.restored``).
        if (stored := launch_layer(config, chosen, overrides)) is not None:
            try:
                config = load_config(
                    config_path or cast("Path | None", before.get("config_path")),
                    overrides,
                    trust_project=trust_folder or bool(before.get("trust_folder")),
                    stored=stored,
                )
            except ConfigError as exc:
                raise _fail(str(exc), 1) from None
    _log_to_file(log_level)
    warn_if_insecure(config)
    raise typer.Exit(
        headless.run_from_config(
            config,
            text,
            session_id=chosen,
            output_format=output_format.value,
            allow=allow or [],
            deny=deny or [],
            max_turns=max_turns,
        )
    )


@app.command("acp")
def serve_acp(
    ctx: typer.Context,
    model: ModelOption = None,
    config_path: ConfigOption = None,
    skip_permissions: SkipPermissionsOption = False,
    execution: ExecutionOption = None,
    base_url: BaseUrlOption = None,
    remote_insecure: RemoteInsecureOption = False,
    action_protocol: ProtocolOption = None,
    trust_folder: TrustOption = False,
) -> None:
    """Serve the Agent Client Protocol on stdin/stdout, for editors (Zed, JetBrains, Neovim) and toad.

    Each session's working directory is the cwd the client gives; its config is loaded there (its
    project files only once the folder is trusted: --trust or the app's prompt) with these options on top. Logs go to the log file, never to stdout."""
    before: dict[str, object] = ctx.obj or {}
    overrides = config_overrides(before, ctx.params)
    path = config_path or cast("Path | None", before.get("config_path"))
    trusted = trust_folder or bool(before.get("trust_folder"))

    def prepare() -> Callable[[Path], Config]:
        """Runs while ``initialize`` is answered: the config checked (a broken one ends the server with its
        message), ``--trust`` applied to the folder it prints, and the loader of a session's config."""
        from freeact_tui.project.config import load_config

        def config_for(cwd: Path) -> Config:
            # an editor's folder is untrusted like any other: its project files apply once trusted (the
            # client is asked at the session's first prompt, or the app's prompt, or --trust for the folder
            # it printed at start); the refusal goes to stderr, stdout is the protocol's
            config = load_config(path, overrides, cwd=cwd, trust_project=False)
            _echo_untrusted(config)
            return config

        if trusted:  # --trust covers the folder it starts in, as printed here, and no other
            _trust_as_printed(Path.cwd())
        warn_if_insecure(config_for(Path.cwd()))
        return config_for

    log_file = _log_to_file()
    typer.echo(f"freeact-tui acp: serving ACP on stdin/stdout; logs in {log_file}", err=True)

    import asyncio
    import logging
    import os

    from freeact_tui.acp import serve

    logging.getLogger("freeact_tui.acp").setLevel(logging.INFO)
    code = 0
    try:
        asyncio.run(serve(prepare))
    except Exception as exc:  # e.g. stdin/stdout that cannot be used: a message, not a traceback
        from freeact_tui.project.sources import ConfigError

        if isinstance(exc, ConfigError):
            typer.echo(f"freeact-tui: {exc}", err=True)
        else:
            logging.getLogger("freeact_tui.acp").exception("the ACP server failed")
            typer.echo(f"freeact-tui acp: {type(exc).__name__}: {exc} (details in {log_file})", err=True)
        code = 1
    logging.shutdown()
    sys.stderr.flush()
    os._exit(code)  # the kernels have stopped; tearing down the interpreter would only cost time


app.add_typer(sessions_app, name="sessions", help="List, show, export and remove sessions.")


@app.command("init")
def init_project(
    log_level: Annotated[
        LogLevel | None, typer.Option("--log-level", help="Accepted as freeact does.")
    ] = None,
) -> None:
    """Make the working directory a freeact project, as `freeact init` does: .freeact/config.toml,
    permissions.toml, the runtime directories and the bundled skills (nothing existing is overwritten)."""
    from freeact_tui.freeact import PermissionManager, config

    working_dir = Path.cwd()
    try:
        config.init(working_dir)
        PermissionManager(working_dir=working_dir, freeact_dir=working_dir / ".freeact").init()
    except (OSError, ValueError) as exc:
        raise _fail(f"cannot initialise {working_dir / '.freeact'}: {exc}", 1) from None
    typer.echo(f"Ensured {working_dir / '.freeact'} (config.toml, permissions.toml, skills).")


def main() -> None:
    """Run the typer app (the console script's ``cli.entry.main`` answers a plain ``sessions list`` itself)."""
    from freeact_tui.timeline import mark

    mark("cli:main")  # the interpreter is up and typer is imported
    try:
        prepare_process()
        app()
    except KeyboardInterrupt:
        sys.exit(130)


# ``load_env_file``, ``start_app`` and ``_log_to_file`` are read from here by tests and older callers.
__all__ = ["LogLevel", "app", "load_env_file", "main", "resolve_session_id", "start_app"]
