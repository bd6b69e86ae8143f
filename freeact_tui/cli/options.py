"""The app's options, read the same way by every command: the choices they take, the options each
subcommand accepts (``SUBCOMMAND_OPTIONS``), ``--session-id``/``--resume`` and the error exit.

Only typer is imported up front (``--version`` and ``--help`` stay fast); the store and the config
are imported where they are needed.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from freeact_tui.cli.sessions import CONFIG_META_KEY
from freeact_tui.version import __version__

if TYPE_CHECKING:
    from freeact_tui.config import Config


class ProtocolChoice(StrEnum):
    tools = "tools"
    text = "text"
    auto = "auto"


class LogLevel(StrEnum):
    debug = "debug"
    info = "info"
    warning = "warning"
    error = "error"
    critical = "critical"


# freeact's --sandbox-config names a sandbox-runtime settings file; ours has no such file.
SANDBOX_CONFIG_REFUSAL = (
    "--sandbox-config is freeact's sandbox-runtime settings file; freeact-tui's sandbox (bubblewrap) "
    "has none: it always limits writes to the working directory and has no network. "
    "Use --sandbox (or --execution sandbox) without it."
)


class ExecutionChoice(StrEnum):
    local = "local"
    sandbox = "sandbox"
    docker = "docker"
    remote = "remote"


def _fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"freeact-tui: {message}", err=True)
    return typer.Exit(code)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"freeact-tui {__version__}")
        raise typer.Exit()


_REMOTE_INSECURE_HELP = "Do not verify the remote gateway's TLS certificate (trusted networks only)."
_TRUST_HELP = (
    "Trust this folder: apply its project files (.freeact-tui.toml, .freeact/, AGENTS.md, skills, .env) "
    "and remember it in the trusted-folders list."
)


# The options the app, `run` and `acp` share, declared once (`run` and `acp` also take them after
# the subcommand; given before it, they arrive in ``ctx.obj``).
ModelOption = Annotated[
    str | None,
    typer.Option("--model", "-m", help="Model, e.g. anthropic:claude-sonnet-4-5, or 'demo' (offline demo)."),
]
ConfigOption = Annotated[
    Path | None, typer.Option("--config", "-c", help="A TOML config file (over the user and project files).")
]
SessionIdOption = Annotated[
    str | None, typer.Option("--session-id", "-s", help="Resume a session by id or unique prefix.")
]
ResumeOption = Annotated[bool, typer.Option("--resume", "-r", help="Resume the latest session here (--resume ID: that session).")]
SkipPermissionsOption = Annotated[
    bool,
    typer.Option("--skip-permissions", help="Approve every action no deny rule refuses (dangerous)."),
]
ExecutionOption = Annotated[ExecutionChoice | None, typer.Option("--execution", "-e", help="Where code runs.")]
BaseUrlOption = Annotated[
    str | None, typer.Option("--base-url", help="An OpenAI-compatible server (local models).")
]
RemoteInsecureOption = Annotated[bool, typer.Option("--remote-insecure", help=_REMOTE_INSECURE_HELP)]
ProtocolOption = Annotated[
    ProtocolChoice | None,
    typer.Option(
        "--action-protocol",
        help="How the model acts: tools (tool calls), text (code blocks in its reply) or auto.",
    ),
]
TrustOption = Annotated[bool, typer.Option("--trust", help=_TRUST_HELP)]
SandboxOption = Annotated[
    bool, typer.Option("--sandbox", help="Run code in the sandbox (as freeact's; = --execution sandbox).")
]
SandboxConfigOption = Annotated[
    Path | None,
    typer.Option("--sandbox-config", metavar="PATH", help="freeact's option; not supported here."),
]


def config_overrides(before: Mapping[str, object], given: Mapping[str, object]) -> dict[str, object]:
    """The config keys the shared options set, from a command's parameters (``ctx.params``): its own
    options, else those given before the subcommand (``before``, the callback's parameters)."""

    def chosen(name: str) -> object:
        return given.get(name) or before.get(name)

    execution, protocol = chosen("execution"), chosen("action_protocol")
    return {
        "model": chosen("model"),
        "skip_permissions": True if chosen("skip_permissions") else None,
        "execution": execution.value if isinstance(execution, ExecutionChoice) else None,
        "base_url": chosen("base_url"),
        "remote_insecure": True if chosen("remote_insecure") else None,
        "action_protocol": protocol.value if isinstance(protocol, ProtocolChoice) else None,
    }


def resolve_session_id(config: Config, session_id: str | None, resume: bool) -> str | None:
    """Turn ``--session-id`` (a UUID or a unique prefix) or ``--resume`` into a session id.

    Raises:
        typer.Exit: the id is invalid, unknown or ambiguous (after printing why).
    """
    from freeact_tui.store.index import is_uuid
    from freeact_tui.store.sessions import (
        AmbiguousSessionId,
        InvalidSessionId,
        SessionNotFound,
        SessionStore,
    )

    store = SessionStore(config.resolved_sessions_dir())
    if resume:
        latest = store.latest(config.resolved_working_dir())
        if latest is None:
            typer.echo("freeact-tui: no earlier session in this directory; starting a new one.", err=True)
            return None
        return latest.id
    if session_id is None:
        return None
    try:
        return store.resolve(session_id)
    except SessionNotFound:
        where = config.resolved_sessions_dir()
        if not is_uuid(session_id.strip()):  # a prefix, or a name that is not here
            raise _fail(
                f"no session matches {session_id!r} in {where}. If it was written elsewhere (a freeact "
                "project keeps its sessions in .freeact/sessions), set `sessions_dir` to that directory."
            ) from None
        # A full id that is not here is an error too: opening an empty session under it would hide
        # that the session lives elsewhere (e.g. a freeact project's .freeact/sessions).
        raise _fail(
            f"no session {session_id} in {where}. If it was written elsewhere (a freeact project keeps "
            "its sessions in .freeact/sessions), set `sessions_dir` to that directory; start without "
            "--session-id for a new session."
        ) from None
    except (InvalidSessionId, AmbiguousSessionId) as exc:
        raise _fail(str(exc)) from None


# The app options each subcommand takes (a ``run`` subcommand would take them all); any other
# option given before a subcommand is refused rather than silently ignored.
SUBCOMMAND_OPTIONS: dict[str, frozenset[str]] = {
    "sessions": frozenset({"config_path", "log_level"}),
    "init": frozenset({"log_level"}),
    "run": frozenset(
        {
            "log_level",
            "sandbox",
            "model",
            "config_path",
            "session_id",
            "resume",
            "skip_permissions",
            "execution",
            "base_url",
            "remote_insecure",
            "action_protocol",
            "trust_folder",
        }
    ),
    "acp": frozenset(
        {
            "model",
            "config_path",
            "skip_permissions",
            "execution",
            "base_url",
            "remote_insecure",
            "action_protocol",
            "trust_folder",
        }
    ),
}


def _given_options(ctx: typer.Context) -> list[str]:
    """The app options set on the command line or by environment (not left at their default)."""
    given = []
    for param in ctx.command.params:
        if param.name is None or param.name == "version":
            continue
        source = ctx.get_parameter_source(param.name)
        # By name: typer vendors its own click, whose ParameterSource is private.
        if source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP"):
            given.append(param.name)
    return given


def _option_flag(ctx: typer.Context, name: str) -> str:
    param = next(p for p in ctx.command.params if p.name == name)
    return max(param.opts, key=len)


def _prepare_subcommand(ctx: typer.Context, subcommand: str, config_path: Path | None) -> None:
    """Refuse app options the subcommand does not take; load ``--config`` for it."""
    from freeact_tui.config import ConfigError, load_config

    takes = SUBCOMMAND_OPTIONS.get(subcommand, frozenset())
    refused = [_option_flag(ctx, name) for name in _given_options(ctx) if name not in takes]
    if refused:
        raise _fail(
            f"{', '.join(refused)} {'does' if len(refused) == 1 else 'do'} not apply to "
            f"`{subcommand}`; give only --config before it."
        )
    if config_path is not None:
        try:
            ctx.meta[CONFIG_META_KEY] = load_config(config_path)
        except ConfigError as exc:
            raise _fail(str(exc)) from None


def _with_sandbox(execution: ExecutionChoice | None, sandbox: bool) -> ExecutionChoice | None:
    """freeact's ``--sandbox`` as ``--execution sandbox`` (a different ``--execution`` is a contradiction)."""
    if not sandbox:
        return execution
    if execution not in (None, ExecutionChoice.sandbox):
        raise _fail(f"--sandbox and --execution {execution.value} contradict each other; give one of them.")
    return ExecutionChoice.sandbox


class OutputChoice(StrEnum):
    text = "text"
    json = "json"
    stream_json = "stream-json"
