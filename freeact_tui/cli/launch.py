"""Starting the app from the parsed options, without typer: the typer callback (``cli.main.run``) and
the quick launch path (``cli.entry``, ``cli.app_options.quick_app_params``) both end here.

Errors are one line on stderr and an exit code (``fail``), the same under typer and without it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from freeact_tui.cli.app_options import ExecutionChoice, LogLevel, ProtocolChoice
from freeact_tui.cli.env_file import load_env_file

if TYPE_CHECKING:
    from freeact_tui.project.config import Config
    from freeact_tui.project.sources import DeferredConfig, LaunchView, Sources, StoredLayer

# freeact's --sandbox-config names a sandbox-runtime settings file; ours has no such file.
SANDBOX_CONFIG_REFUSAL = (
    "--sandbox-config is freeact's sandbox-runtime settings file; freeact-tui's sandbox (bubblewrap) "
    "has none: it always limits writes to the working directory and has no network. "
    "Use --sandbox (or --execution sandbox) without it."
)


def say(message: str, *, err: bool = False) -> None:
    """One line to stdout (or stderr), flushed: what ``typer.echo`` does for text."""
    stream = sys.stderr if err else sys.stdout
    stream.write(f"{message}\n")
    stream.flush()


def fail(message: str, code: int = 2) -> SystemExit:
    """Say ``freeact-tui: message`` on stderr; the caller raises the returned exit."""
    say(f"freeact-tui: {message}", err=True)
    return SystemExit(code)


def prepare_process() -> None:
    """What every command line does first: the user's ``.env``, and no IRI grammar."""
    # jsonschema (imported with the mcp package) builds an IRI grammar at import time (~0.9 s of
    # CPU) only to check the "iri" formats, which nothing in this process asserts (format checks are
    # off unless a checker is passed): skip that optional import in the app's own process.
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
    load_env_file()


def with_sandbox(execution: ExecutionChoice | None, sandbox: bool) -> ExecutionChoice | None:
    """freeact's ``--sandbox`` as ``--execution sandbox`` (a different ``--execution`` is a contradiction)."""
    if not sandbox:
        return execution
    if execution not in (None, ExecutionChoice.sandbox):
        raise fail(f"--sandbox and --execution {execution.value} contradict each other; give one of them.")
    return ExecutionChoice.sandbox


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


def launch_app(params: Mapping[str, object]) -> None:
    """Start the app with the app callback's parameters (typer's ``ctx.params`` or the quick path's)."""
    if params.get("sandbox_config") is not None:
        raise fail(SANDBOX_CONFIG_REFUSAL)
    execution = with_sandbox(params.get("execution"), bool(params.get("sandbox")))  # type: ignore[arg-type]
    start_app(
        params.get("config_path"),  # type: ignore[arg-type]
        params.get("session_id"),  # type: ignore[arg-type]
        bool(params.get("resume")),
        config_overrides({}, {**params, "execution": execution}),
        params.get("log_level"),  # type: ignore[arg-type]
        trust_project=bool(params.get("trust_folder")),
        prompt=params.get("prompt"),  # type: ignore[arg-type]
    )


def start_app(
    config_path: Path | None,
    session_id: str | None,
    resume: bool,
    overrides: dict[str, object],
    log_level: LogLevel | None = None,
    *,
    trust_project: bool = False,
    prompt: str | None = None,
) -> None:
    """Load the config and run the terminal app until it quits (it ends the process); ``prompt`` is sent
    as the first message once the agent is open."""
    from freeact_tui.timeline import mark

    mark("config:start")
    if session_id is not None and resume:
        raise fail("use either --session-id or --resume, not both.")
    config, remember_valid = load_for_app(
        config_path, overrides, trust_project=trust_project, defer=session_id is None and not resume
    )
    mark("config:end")
    from freeact_tui.project.sources import DeferredConfig, LaunchView

    chosen = None if isinstance(config, DeferredConfig) else resolve_session_id(config, session_id, resume)
    if chosen is not None and not isinstance(config, DeferredConfig):
        from freeact_tui.store.restored import launch_layer

        # The session's own model, protocol and base URL, for what the command line leaves open: a
        # config layer, a project's when the session is stored in the project (``store.restored``).
        if (stored := launch_layer(config, chosen, overrides)) is not None:
            config, remember_valid = load_for_app(
                config_path, overrides, trust_project=trust_project, defer=False, stored=stored
            )
    view = config.view if isinstance(config, DeferredConfig) else LaunchView.of(config)
    remember_valid()  # only now: a launch refused (e.g. its session id) writes nothing
    log_to_file(log_level)
    warn_if_insecure(view)

    mark("app_import:start")
    import asyncio
    import gc

    from freeact_tui.tui.app import FreeactApp
    from freeact_tui.tui.quitting import exit_now

    mark("app_import:end")
    from freeact_tui.execution.kernel import spare_gateway

    if view.execution == "local":
        # A local kernel's gateway imports on the other core while the first frame is mounted and
        # drawn (spawned at launch it slowed the app's own imports; after the first frame, the kernel
        # waited on it). It knows nothing of the project until the trust decision.
        spare_gateway.spawn()

    def after_first_frame() -> None:
        # Off since the entry point (``cli.entry``), if it took the quick path; the first collection
        # (of all start-up made) comes after the first frame. Not gc.freeze(): the cycles start-up left (a
        # third of its objects) would never be freed.
        gc.enable()

    tui = FreeactApp(
        config, session_id=chosen, fast_exit=True, after_first_frame=after_first_frame, first_prompt=prompt
    )
    # Our own loop, never closed: closing it would wait for tasks and threads of kernels being left.
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    tui.run(loop=loop)
    if tui.config_failure:  # deferred, it did not validate after all (see ``load_for_app``)
        spare_gateway.discard()
        say(f"freeact-tui: {tui.config_failure}", err=True)
        exit_now(2)
    if tui.resume_hint:
        say(tui.resume_hint)
    spare_gateway.discard()  # never taken (no agent was opened): it would end with us anyway, a little later
    exit_now(tui.return_code or 0)  # the kernels end by themselves once we are gone


def load_for_app(
    config_path: Path | None,
    overrides: dict[str, object],
    *,
    trust_project: bool,
    defer: bool,
    stored: StoredLayer | None = None,
) -> tuple[Config | DeferredConfig, Callable[[], None]]:
    """The app's config: validated now, or (``defer``) once the first frame is drawn if the very same
    sources validated before (``config_sources.ValidSources``): validating imports pydantic and builds
    the models, which the first frame does not need. Sources not known valid are validated now, so a
    broken config is one clear line before the app starts, never a screen that flashes and goes.
    Returned with it: what records the sources as valid, for the caller to call once the launch goes on.

    Raises:
        SystemExit: a source is broken (after saying why), code 2.
    """
    from freeact_tui.project.sources import ConfigError, DeferredConfig, LaunchView, ValidSources, gather

    try:
        sources = gather(config_path, overrides, trust_project=trust_project, stored=stored)
    except ConfigError as exc:
        raise fail(str(exc)) from None
    known, fingerprint = ValidSources(), sources.fingerprint()
    again = partial(_load_again, config_path, overrides, stored)
    if defer and fingerprint in known:
        view = LaunchView.from_values(sources.merged, sources.notices)
        return DeferredConfig(view, partial(_validated, sources, again)), lambda: None
    try:
        config = _validated(sources, again)
    except ConfigError as exc:
        raise fail(str(exc)) from None
    return config, partial(known.add, fingerprint)


def _validated(sources: Sources, again: Callable[[], Config]) -> Config:
    from freeact_tui.timeline import mark

    mark("config_validate:start")
    with _pydantic_plugins_off():
        from freeact_tui.project.config import validate

        config = validate(sources, again)
    mark("config_validate:end")
    return config


def _load_again(config_path: Path | None, overrides: dict[str, object], stored: StoredLayer | None) -> Config:
    from freeact_tui.project.config import load_config

    return load_config(config_path, overrides, stored=stored)


@contextmanager
def _pydantic_plugins_off() -> Iterator[None]:
    """While the config's models are built: no search for pydantic plugins (typer does the same).

    The search reads the entry points of every installed distribution (a fiftieth of a second here);
    the models built later (the agent's, after the first frame) still find any plugin there is.
    """
    before = os.environ.get(_PLUGINS_ENV)
    os.environ[_PLUGINS_ENV] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(_PLUGINS_ENV, None)
        else:
            os.environ[_PLUGINS_ENV] = before


_PLUGINS_ENV = "PYDANTIC_DISABLE_PLUGINS"


def resolve_session_id(config: Config, session_id: str | None, resume: bool) -> str | None:
    """Turn ``--session-id`` (a UUID or a unique prefix) or ``--resume`` into a session id.

    Raises:
        SystemExit: the id is invalid, unknown or ambiguous (after printing why), code 2.
    """
    if session_id is None and not resume:
        return None  # the common launch: the store is not needed yet
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
            say("freeact-tui: no earlier session in this directory; starting a new one.", err=True)
            return None
        return latest.id
    assert session_id is not None
    try:
        return store.resolve(session_id)
    except SessionNotFound:
        where = config.resolved_sessions_dir()
        if not is_uuid(session_id.strip()):  # a prefix, or a name that is not here
            raise fail(
                f"no session matches {session_id!r} in {where}. If it was written elsewhere (a freeact "
                "project keeps its sessions in .freeact/sessions), set `sessions_dir` to that directory."
            ) from None
        # A full id that is not here is an error too: opening an empty session under it would hide
        # that the session lives elsewhere (e.g. a freeact project's .freeact/sessions).
        raise fail(
            f"no session {session_id} in {where}. If it was written elsewhere (a freeact project keeps "
            "its sessions in .freeact/sessions), set `sessions_dir` to that directory; start without "
            "--session-id for a new session."
        ) from None
    except (InvalidSessionId, AmbiguousSessionId) as exc:
        raise fail(str(exc)) from None


def warn_if_insecure(config: Config | LaunchView) -> None:
    """Say on stderr that the remote gateway's certificate is not verified (if so)."""
    if config.execution != "remote":
        return
    from freeact_tui.execution.gateway.endpoint import config_warning

    if warning := config_warning(config.execution, config.remote_url, config.remote_insecure):
        say(warning, err=True)


def log_to_file(level: LogLevel | None = None) -> Path:
    """Send library logs and warnings to a file: anything written to the terminal would tear the UI.

    Args:
        level: ``--log-level`` (default: warning).
    """
    import logging

    from freeact_tui.project import paths

    log_dir = paths.data_dir() / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log_file = log_dir / "freeact-tui.log"
    handler = logging.FileHandler(log_file, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, (level or LogLevel.warning).value.upper()))
    logging.captureWarnings(True)
    return log_file


__all__ = [
    "SANDBOX_CONFIG_REFUSAL",
    "config_overrides",
    "fail",
    "launch_app",
    "load_for_app",
    "log_to_file",
    "prepare_process",
    "resolve_session_id",
    "say",
    "start_app",
    "warn_if_insecure",
    "with_sandbox",
]
