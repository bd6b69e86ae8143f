"""The exit codes of a headless run, one table: ``run`` returns them and ``run --help`` lists them."""

from __future__ import annotations

from typing import Literal

Status = Literal["answered", "error", "refused", "max_turns", "stalled", "cut", "filtered", "interrupted"]

EXIT_CODES: dict[Status, tuple[int, str]] = {
    "answered": (0, "the model answered"),
    "error": (1, "an error (the model, the config, the request)"),
    "refused": (2, "an action was refused for lack of approval"),
    "max_turns": (3, "--max-turns reached"),
    "stalled": (
        4,
        "max_steps_without_progress steps in a row made no progress, or max_failing_steps failing steps "
        "with none that worked",
    ),
    "cut": (5, "the last reply reached the token limit (finish reason \"length\")"),
    "filtered": (6, "the provider's content filter stopped the last reply"),
    "interrupted": (130, "interrupted"),
}
"""Each status: its exit code and what it means."""


def exit_code(status: Status) -> int:
    return EXIT_CODES[status][0]


def exit_codes_help() -> str:
    """The exit codes as ``run --help`` lists them: ``0 answered: …; 1 error: …``."""
    return "; ".join(f"{code} {status}: {what}" for status, (code, what) in EXIT_CODES.items())


__all__ = ["EXIT_CODES", "Status", "exit_code", "exit_codes_help"]
