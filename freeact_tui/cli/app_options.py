"""The app's own options as data, without typer: their choices, and what the quick launch path reads.

``freeact-tui [options]`` with nothing but the app's options (the common launch) is taken apart here
and started without importing typer (its import and parsing cost a fifth of the time to the first
frame). typer stays the one definition of the options (``cli.options``, ``cli.main.run``):
``tests/cli/test_quick_launch.py`` checks ``APP_OPTIONS`` against it, and that both parse the same command
lines to the same values. Anything this does not take apart with certainty (``--help``, ``--version``,
a subcommand, an unknown or combined option, a bad choice, a value that looks like an option) is left
to typer, which answers it as always.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any


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


class ExecutionChoice(StrEnum):
    local = "local"
    sandbox = "sandbox"
    docker = "docker"
    remote = "remote"


class OutputChoice(StrEnum):
    text = "text"
    json = "json"
    stream_json = "stream-json"


@dataclass(frozen=True)
class AppOption:
    """One option of the app's callback: its parameter name, its flags, and how a value is read.

    ``kind`` is ``bool`` for a flag, ``str``, ``Path`` or a choice enum for an option with a value.
    """

    name: str
    flags: tuple[str, ...]
    kind: type[Any]

    @property
    def is_flag(self) -> bool:
        return self.kind is bool


# In the order of ``cli.main.run``'s parameters (``--version`` is typer's: it never starts the app).
APP_OPTIONS: tuple[AppOption, ...] = (
    AppOption("model", ("--model", "-m"), str),
    AppOption("config_path", ("--config", "-c"), Path),
    AppOption("session_id", ("--session-id", "-s"), str),
    AppOption("resume", ("--resume", "-r"), bool),
    AppOption("skip_permissions", ("--skip-permissions",), bool),
    AppOption("execution", ("--execution", "-e"), ExecutionChoice),
    AppOption("base_url", ("--base-url",), str),
    AppOption("remote_insecure", ("--remote-insecure",), bool),
    AppOption("action_protocol", ("--action-protocol",), ProtocolChoice),
    AppOption("trust_folder", ("--trust",), bool),
    AppOption("sandbox", ("--sandbox",), bool),
    AppOption("sandbox_config", ("--sandbox-config",), Path),
    AppOption("log_level", ("--log-level",), LogLevel),
    AppOption("prompt", ("--prompt",), str),
)
_BY_FLAG = {flag: option for option in APP_OPTIONS for flag in option.flags}


def quick_app_params(argv: list[str]) -> dict[str, object] | None:
    """The app callback's parameters (as typer would pass them) for ``argv`` (without the program),
    or ``None`` when ``argv`` is anything but the app's own options in their plain forms.

    Plain forms: ``--flag``, ``--opt VALUE``, ``--opt=VALUE``, ``-o VALUE``; given twice, the last wins
    (as typer does). A value that starts with ``-`` and a choice typer would refuse go to typer.
    """
    params: dict[str, object] = {option.name: False if option.is_flag else None for option in APP_OPTIONS}
    words = iter(argv)
    for word in words:
        name, eq, value = word.partition("=")
        option = _BY_FLAG.get(name)
        if option is None or (eq and not name.startswith("--")):
            return None  # a subcommand, --help, --version, an unknown option, -o=VALUE
        if option.is_flag:
            if eq:
                return None
            params[option.name] = True
            continue
        if not eq:
            value = next(words, "")
        if not value or value.startswith("-"):
            return None
        if issubclass(option.kind, StrEnum) and value not in {choice.value for choice in option.kind}:
            return None  # typer says which choices there are
        params[option.name] = option.kind(value)
    return params


__all__ = [
    "APP_OPTIONS",
    "AppOption",
    "ExecutionChoice",
    "LogLevel",
    "OutputChoice",
    "ProtocolChoice",
    "quick_app_params",
]
