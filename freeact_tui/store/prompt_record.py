"""What the app adds to a stored message that the user never saw as such, and how to take it off again.

The agent puts text the user did not type in front of a prompt (notes after an undo or a rewind,
the user's own ``!command`` runs with their output) and closes a cancelled request with a note to
the model; it also keeps each response's usage. These records are request and response metadata,
which freeact 0.11 reads and ignores. Sessions written before them (or by freeact) are read by the
shapes the app has always written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from freeact_tui.userwords import fence_for

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


def shell_context(command: str, output: str, failed: bool) -> str:
    """How a ``!command`` the user ran reaches the model, in front of the next prompt."""
    status = " (it failed)" if failed else ""
    fence = fence_for(output)  # longer than any backtick run inside: the block's end is unambiguous
    return f"[I ran `{command}` in the kernel's shell{status}; its output:]\n{fence}\n{output.rstrip()}\n{fence}"


_SHELL = re.compile(
    r"\[I ran `(?P<command>.*?)` in the kernel's shell(?P<failed> \(it failed\))?; its output:\]\n(?P<fence>`{3,})\n"
)
_NOTE = "[Note: "


@dataclass(frozen=True)
class ShellRun:
    """A ``!command`` the user ran before a prompt, as the model was told of it."""

    command: str
    output: str
    failed: bool


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
        return TypedPrompt(text[added:].lstrip("\n"), tuple(_shell_runs(text[:added])))
    if not text.startswith((_NOTE, "[I ran `")):
        return TypedPrompt(text)
    rest, runs = text, []
    while True:
        match = _SHELL.match(rest)
        if match is not None:
            end = _fence_end(rest, match)
            if end < 0:
                break
            runs.append(ShellRun(match["command"], rest[match.end() : end], bool(match["failed"])))
            rest = rest[end + 1 + len(match["fence"]) :].lstrip("\n")
        elif rest.startswith(_NOTE):
            cut = rest.find("\n\n")
            if cut < 0:
                break
            rest = rest[cut:].lstrip("\n")
        else:
            break
    return TypedPrompt(rest, tuple(runs))


def added_items(metadata: Any) -> int:
    """How many leading items of a multimodal prompt the agent added (0 without a record)."""
    return _added(metadata) or 0


def _added(metadata: Any) -> int | None:
    record = metadata.get(PROMPT_KEY) if isinstance(metadata, dict) else None
    added = record.get("added") if isinstance(record, dict) else None
    return added if isinstance(added, int) and added >= 0 else None


def _shell_runs(prefix: str) -> list[ShellRun]:
    runs = []
    for match in _SHELL.finditer(prefix):
        end = _fence_end(prefix, match)
        if end >= 0:
            runs.append(ShellRun(match["command"], prefix[match.end() : end], bool(match["failed"])))
    return runs


def _fence_end(text: str, match: re.Match[str]) -> int:
    """Where the shell block that ``match`` opens ends (the newline before its closing fence), or -1."""
    fence = match["fence"]
    if text.startswith(fence, match.end()):  # no output at all
        return match.end() - 1
    end = text.find("\n" + fence, match.end())
    while end >= 0 and text[end + 1 + len(fence) : end + 2 + len(fence)] == "`":  # a longer run: not the end
        end = text.find("\n" + fence, end + 1)
    return end


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
