"""``@path`` mentions of a prompt: the files they name are attached when the prompt is sent.

A text file of at most ``INLINE_MAX_BYTES`` is inlined as a fenced block after the prompt; a larger,
binary or unreadable one is referenced by path with a note (the agent can read it with its tools).
At most ``TOTAL_MAX_BYTES`` are inlined per prompt. Tokens that name no file stay plain text.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path

from freeact_tui.project import files as projectfiles
from freeact_tui.reach import probe

INLINE_MAX_BYTES = 100_000
TOTAL_MAX_BYTES = 300_000

_MENTION = re.compile(r"(?:(?<=\s)|^)@([^\s`'\"<>|]+)")


def mentioned_paths(text: str) -> list[str]:
    """The ``@token``s of ``text`` in order, without repeats (trailing punctuation dropped)."""
    out: list[str] = []
    for match in _MENTION.finditer(text):
        token = match.group(1).rstrip(".,;:!?)]}")
        if token and token not in out:
            out.append(token)
    return out


def _fence(content: str) -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", content)), default=2)
    return "`" * max(3, longest + 1)


def attach_mentions(
    text: str,
    root: Path,
    *,
    inline_max: int = INLINE_MAX_BYTES,
    total_max: int = TOTAL_MAX_BYTES,
) -> str:
    """``text`` with the files its ``@path`` tokens name (relative to ``root``) attached after it.

    Returns ``text`` unchanged when no token names an existing file.
    """
    sections: list[str] = []
    total = 0
    for token in mentioned_paths(text):
        path = probe.expanded(root / token)  # ``@~nosuchuser/x``, a name too long: no file, plain text
        found = probe.stat_of(path)
        if found is None or not stat.S_ISREG(found.st_mode):
            continue
        size = found.st_size
        if size > inline_max:
            sections.append(
                f"[@{token}: {size:,} bytes, too large to attach; read it from the file if needed]"
            )
            continue
        if total + size > total_max:
            sections.append(
                f"[@{token}: not attached, the attachments of this prompt reached {total_max:,} bytes]"
            )
            continue
        try:
            # the folder's file: a link to /dev/zero or a FIFO counts 0 bytes; regular and bounded only
            data = projectfiles.read_bytes(path, limit=inline_max)
        except OSError as exc:
            sections.append(f"[@{token}: cannot be read ({exc.strerror or exc})]")
            continue
        if b"\0" in data[:8192]:
            sections.append(f"[@{token}: a binary file ({size:,} bytes), not attached]")
            continue
        try:
            content = data.decode("utf-8")
        except UnicodeDecodeError:
            sections.append(f"[@{token}: not UTF-8 text ({size:,} bytes), not attached]")
            continue
        total += size
        fence = _fence(content)
        lang = path.suffix.lstrip(".")
        sections.append(f"[@{token}]\n{fence}{lang}\n{content.rstrip()}\n{fence}")
    if not sections:
        return text
    return text + "\n\n" + "\n\n".join(sections)
