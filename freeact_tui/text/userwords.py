"""The user's own words in a stored prompt, without what the app put before them for the model.

A prompt sent to the model may start with notes (``[Note: the user undid …]``, one a line) and with
the user's own shell commands and their output (``[I ran `ls` in the kernel's shell; its output:]``
and a fenced block); a blank line separates each from what follows. ``user_words(text)`` drops that
prefix; a text whose prefix does not parse is returned as it is (nothing the user typed is lost).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NOTE_START = "[Note: "
SHELL_HEAD = re.compile(
    r"\[I ran `(?P<command>.*?)` in the kernel's shell(?P<failed> \(it failed\))?; its output:\]\n(?P<fence>`{3,})\n",
    re.S,
)


def fence_for(text: str) -> str:
    """A code fence longer than any run of backticks in ``text``, so that the block's end is unambiguous."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _skip_notes(text: str) -> str | None:
    """``text`` after its leading note lines and the blank line after them, or None when none lead."""
    if not text.startswith(NOTE_START):
        return None
    lines = text.split("\n")
    n = 0
    while n < len(lines) and lines[n].startswith(NOTE_START) and lines[n].endswith("]"):
        n += 1
    if n == 0 or n >= len(lines) or lines[n] != "":
        return "" if n == len(lines) else None
    return "\n".join(lines[n + 1 :])


@dataclass(frozen=True)
class ShellRun:
    """A ``!command`` the user ran before a prompt, as the model was told of it."""

    command: str
    output: str
    failed: bool


def _skip_shell(text: str, runs: list[ShellRun]) -> str | None:
    """``text`` after one leading shell entry and the blank line after it (the entry appended to
    ``runs``), or None when none leads."""
    head = SHELL_HEAD.match(text)
    if head is None:
        return None
    fence = head.group("fence")
    body = text[head.end() :]
    if body.startswith(fence + "\n") or body == fence:  # empty output
        end = 0
    else:
        found = body.find("\n" + fence + "\n")
        found = found if found >= 0 else (len(body) - len(fence) - 1 if body.endswith("\n" + fence) else -1)
        if found < 0:
            return None
        end = found + 1
    rest = body[end + len(fence) :]
    if rest != "" and not rest.startswith("\n\n"):
        return None
    runs.append(ShellRun(head.group("command"), body[: max(end - 1, 0)], bool(head.group("failed"))))
    return rest[2:]


def take_prefix(text: str) -> tuple[str, list[ShellRun]]:
    """What the user typed, and the shell runs in the notes and shell output put before it for the model."""
    rest, runs = text, list[ShellRun]()
    while True:
        after = _skip_notes(rest)
        if after is None:
            after = _skip_shell(rest, runs)
        if after is None:
            return rest, runs
        rest = after


def user_words(text: str) -> str:
    """What the user typed, without the notes and shell output put before it for the model."""
    return take_prefix(text)[0]


__all__ = ["ShellRun", "fence_for", "take_prefix", "user_words"]


_ATTACHED = re.compile(r"\n\n\[@(?P<token>[^\]\n]+?)(?:\]\n|: )")


def split_attachments(text: str) -> tuple[str, str]:
    """``text`` as (what the user typed, the files its ``@path`` mentions attached after it).

    The app attaches each mentioned file after a blank line, headed ``[@path]`` or ``[@path: why]``
    (``tui/mentions.py``); a header counts only for a ``@path`` the text before it mentions.
    """
    for m in _ATTACHED.finditer(text):
        if f"@{m.group('token')}" in text[: m.start()]:
            return text[: m.start()], text[m.start() + 2 :]
    return text, ""
