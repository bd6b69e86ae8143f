"""The app's options as typer declares them, read the same way by every command: the options each
subcommand accepts (``SUBCOMMAND_OPTIONS``) and the error exit. The choices and ``--session-id`` /
``--resume`` live in typer-free modules (``app_options``, ``launch``) and are re-exported here.

Only typer is imported up front (``--version`` and ``--help`` stay fast); the store and the config
are imported where they are needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from freeact_tui.cli.app_options import ExecutionChoice, LogLevel, OutputChoice, ProtocolChoice
from freeact_tui.cli.launch import SANDBOX_CONFIG_REFUSAL, config_overrides, resolve_session_id
from freeact_tui.cli.sessions import CONFIG_META_KEY
from freeact_tui.version import __version__

# Re-exported: the choices and the launch helpers live in typer-free modules (the quick launch path).
__all__ = [
    "SANDBOX_CONFIG_REFUSAL",
    "ExecutionChoice",
    "LogLevel",
    "OutputChoice",
    "ProtocolChoice",
    "config_overrides",
    "resolve_session_id",
]


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
PromptOption = Annotated[
    str | None,
    typer.Option(
        "--prompt",
        help='A first message, sent once the app is open (also: freeact-tui "PROMPT"; -p "PROMPT" runs it headless).',
    ),
]
SandboxOption = Annotated[
    bool, typer.Option("--sandbox", help="Run code in the sandbox (as freeact's; = --execution sandbox).")
]
SandboxConfigOption = Annotated[
    Path | None,
    typer.Option("--sandbox-config", metavar="PATH", help="freeact's option; not supported here."),
]


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
    takes = SUBCOMMAND_OPTIONS.get(subcommand, frozenset())
    refused = [_option_flag(ctx, name) for name in _given_options(ctx) if name not in takes]
    if refused:
        raise _fail(
            f"{', '.join(refused)} {'does' if len(refused) == 1 else 'do'} not apply to "
            f"`{subcommand}`; give only --config before it."
        )
    if config_path is not None:
        from freeact_tui.project.config import (  # (only then: `acp` answers before it)
            ConfigError,
            load_config,
        )

        try:
            ctx.meta[CONFIG_META_KEY] = load_config(config_path)
        except ConfigError as exc:
            raise _fail(str(exc)) from None
