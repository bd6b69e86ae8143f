"""``freeact-tui sessions …``: list, show, export and remove stored sessions (a typer sub-app)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

if TYPE_CHECKING:
    from freeact_tui.project.config import Config
    from freeact_tui.store import SessionStore

sessions_app = typer.Typer(
    name="sessions",
    help="List, show, export and remove stored sessions. IDs may be shortened to a unique prefix.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

SessionsDirOption = Annotated[
    Path | None,
    typer.Option("--sessions-dir", help="Sessions directory (default: from the config).", show_default=False),
]
ConfigOption = Annotated[
    Path | None, typer.Option("--config", help="Config file to read the sessions directory from.")
]
IdArgument = Annotated[str, typer.Argument(help="Session id or a unique prefix of it.", show_default=False)]

# Where the app's callback leaves the Config of a ``--config`` given before ``sessions``.
CONFIG_META_KEY = "freeact_tui.config"


def _fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"Error: {message}", err=True)
    raise typer.Exit(code)


def _store(ctx: typer.Context, sessions_dir: Path | None, config: Path | None) -> SessionStore:
    """The store of ``--sessions-dir``, else of ``--config`` (this command's, else the app's), else defaults."""
    from freeact_tui.project.config import ConfigError, load_config
    from freeact_tui.store import SessionStore

    if sessions_dir is not None:
        return SessionStore(sessions_dir)
    parent_config: Config | None = ctx.meta.get(CONFIG_META_KEY)
    try:
        cfg = parent_config if parent_config is not None and config is None else load_config(config)
    except ConfigError as exc:
        _fail(str(exc), 2)
    return SessionStore(cfg.resolved_sessions_dir())


def _resolve(store: SessionStore, id_or_prefix: str) -> str:
    from freeact_tui.store import AmbiguousSessionId, InvalidSessionId, SessionNotFound

    try:
        return store.resolve(id_or_prefix)
    except InvalidSessionId as exc:
        _fail(str(exc), 2)
    except (SessionNotFound, AmbiguousSessionId) as exc:
        _fail(str(exc), 1)


@sessions_app.command("list")
def list_sessions(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Show at most this many sessions.")] = 20,
    show_all: Annotated[bool, typer.Option("--all", "-a", help="Show every session.")] = False,
    full_ids: Annotated[bool, typer.Option("--full-ids", help="Show whole session ids.")] = False,
    sessions_dir: SessionsDirOption = None,
    config: ConfigOption = None,
) -> None:
    """List sessions, newest first."""
    from freeact_tui.cli.listing import print_sessions

    store = _store(ctx, sessions_dir, config)
    print_sessions(store.root, limit=limit, show_all=show_all, full_ids=full_ids)


@sessions_app.command("show")
def show_session(
    ctx: typer.Context,
    session_id: IdArgument,
    agent: Annotated[str, typer.Option("--agent", help="History to show: main or a subagent id.")] = "main",
    system: Annotated[bool, typer.Option("--system", help="Include the system prompt.")] = False,
    sessions_dir: SessionsDirOption = None,
    config: ConfigOption = None,
) -> None:
    """Show a conversation as readable text."""
    from freeact_tui.cli.listing import when
    from freeact_tui.store import validate_agent_id
    from freeact_tui.store.export import render_text
    from freeact_tui.text.safe import visible

    store = _store(ctx, sessions_dir, config)
    session = store.session(_resolve(store, session_id))
    try:
        agent_id = validate_agent_id(agent)
    except ValueError as exc:
        _fail(str(exc), 2)
    history = session.load(agent_id)
    info = session.info()
    typer.echo(f"Session {session.id}: {visible(info.title, multiline=False)}")
    model = visible(info.model or "?", multiline=False)
    typer.echo(f"Updated {when(info.updated)} · {info.message_count} messages · model {model}")
    if info.subagents:
        subagents = ", ".join(f"{k} ({v})" for k, v in info.subagents.items())
        typer.echo("Subagents: " + visible(subagents, multiline=False))
    typer.echo("")
    sys.stdout.write(render_text(history.messages, include_system=system, rewinds=history.rewinds))
    sys.stdout.flush()
    if history.damage is not None:
        _fail(
            f"session is damaged: {history.damage} (showing the {len(history.messages)} messages before it)"
        )


@sessions_app.command("export")
def export_session(
    ctx: typer.Context,
    session_id: IdArgument,
    fmt: Annotated[str, typer.Option("--format", "-f", help="md or json.")] = "md",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file (default: stdout).")
    ] = None,
    sessions_dir: SessionsDirOption = None,
    config: ConfigOption = None,
) -> None:
    """Export a conversation as markdown or JSON."""
    from freeact_tui.project import paths
    from freeact_tui.store.export import ExportFormat, render

    if fmt not in ("md", "json"):
        _fail(f"unknown format {fmt!r} (expected md or json)", 2)
    store = _store(ctx, sessions_dir, config)
    session = store.session(_resolve(store, session_id))
    history = session.load()
    if history.damage is not None:
        _fail(f"session is damaged: {history.damage}; nothing exported (`sessions show` shows what loads)")
    fmt_: ExportFormat = "md" if fmt == "md" else "json"
    text = render(history.messages, fmt_, title=session.info().title, rewinds=history.rewinds)
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        paths.atomic_write_text(output, text)
    except OSError as exc:
        _fail(f"cannot write {output}: {exc.strerror or exc}")
    typer.echo(f"Exported {len(history.messages)} messages to {output}", err=True)


@sessions_app.command("rm")
def remove_session(
    ctx: typer.Context,
    session_id: IdArgument,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    sessions_dir: SessionsDirOption = None,
    config: ConfigOption = None,
) -> None:
    """Remove a session and everything stored with it."""
    from freeact_tui.store import SessionNotFound
    from freeact_tui.store.lock import SessionLocked

    store = _store(ctx, sessions_dir, config)
    full_id = _resolve(store, session_id)
    session = store.session(full_id)
    title = session.info().title if session.exists() else "(no history)"
    if not yes and not typer.confirm(f"Remove session {full_id} ({title})?", default=False):
        typer.echo("Nothing removed.", err=True)
        raise typer.Exit(1)
    try:
        store.delete(full_id)
    except (SessionNotFound, SessionLocked, OSError) as exc:
        _fail(str(exc))
    typer.echo(f"Removed session {full_id}")
