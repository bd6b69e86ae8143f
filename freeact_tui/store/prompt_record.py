"""What the app adds to a stored message that the user never saw as such, and how to take it off again.

The agent puts text the user did not type in front of a prompt (notes after an undo or a rewind,
the user's own ``!command`` runs with their output) and closes a cancelled request with a note to
the model; it also keeps each response's usage. These records are request and response metadata,
which freeact 0.11 reads and ignores. Sessions written before them (or by freeact) are read by the
shapes the app has always written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from freeact_tui.text.userwords import ShellRun, fence_for, take_prefix

PROMPT_KEY = "freeact_tui_prompt"
"""Request metadata: ``{"added": N}`` — the first N characters of the prompt (or N leading items of a
multimodal prompt) were put there by the agent, not typed."""
CUT_KEY = "freeact_tui_cut"
"""Response metadata: the reply was cut (``"cancelled"``: the user stopped the turn or quit mid-stream)."""
USAGE_KEY = "freeact_tui_usage"
"""Response metadata: the tokens counted for this response (``in``, ``out``, ``cost``, ``estimated``)."""

CANCELLED_NOTE = (
    "[The user cancelled this request before it was answered. Answer the next request, not this one.]"
)
"""What closes a request cancelled before the model wrote any text (for the model; never shown)."""

INTERRUPTED = "Interrupted by user."
"""The last line of a cancelled action's return (after what it printed before): for the model; the log
shows the cancel as a notice of its own."""


def shell_context(command: str, output: str, failed: bool) -> str:
    """How a ``!command`` the user ran reaches the model, in front of the next prompt."""
    status = " (it failed)" if failed else ""
    fence = fence_for(output)  # longer than any backtick run inside: the block's end is unambiguous
    return f"[I ran `{command}` in the kernel's shell{status}; its output:]\n{fence}\n{output.rstrip()}\n{fence}"


@dataclass(frozen=True)
class TypedPrompt:
    """A stored prompt taken apart: what the user typed, and the shell runs put in front of it."""

    typed: str
    shell: tuple[ShellRun, ...] = ()


def split_prompt(text: str, metadata: Any) -> TypedPrompt:
    """What the user typed of a stored prompt's text, and the ``!command`` runs the agent put before it.

    With the agent's record (``PROMPT_KEY``) the split is exact; without it (older sessions) leading
    ``[Note: …]`` paragraphs and ``[I ran …]`` blocks are taken off.
    """
    added = _added(metadata)
    if added is not None:
        return TypedPrompt(text[added:].lstrip("\n"), tuple(take_prefix(text[:added])[1]))
    typed, runs = take_prefix(text)
    return TypedPrompt(typed, tuple(runs))


def added_items(metadata: Any) -> int:
    """How many leading items of a multimodal prompt the agent added (0 without a record)."""
    return _added(metadata) or 0


def _added(metadata: Any) -> int | None:
    record = metadata.get(PROMPT_KEY) if isinstance(metadata, dict) else None
    added = record.get("added") if isinstance(record, dict) else None
    return added if isinstance(added, int) and added >= 0 else None


def response_cut(metadata: Any, texts: list[str]) -> bool:
    """Whether a stored response was cut by a cancelled turn (its ``texts``: for sessions without the record)."""
    if isinstance(metadata, dict) and metadata.get(CUT_KEY):
        return True
    return CANCELLED_NOTE in texts


def prompt_metadata(added: int) -> dict[str, Any] | None:
    """The request metadata that records ``added`` characters (or items) in front of the user's prompt."""
    return {PROMPT_KEY: {"added": added}} if added else None


__all__ = [
    "CANCELLED_NOTE",
    "CUT_KEY",
    "PROMPT_KEY",
    "USAGE_KEY",
    "ShellRun",
    "TypedPrompt",
    "added_items",
    "prompt_metadata",
    "response_cut",
    "shell_context",
    "split_prompt",
]
