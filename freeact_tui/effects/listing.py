"""Names in one bounded line, grouped by structure: the words of every reading that lists paths (#42).

A writer whose destination fans out (``landing``: ``savefig('fig')`` may write ``fig.png``, ``fig.pdf`` and
14 more; ``np.savez``, the ``to_*`` writers) gives names that differ only in their suffix. They are shown as
one entry, ``fig.{avif,eps,gif,jpeg,… 12 more}``, so the line says what is written instead of "and 13 more".
A line shows at most ``MAX_NAMED`` entries and each entry at most ``MAX_SUFFIXES`` suffixes, whatever the
names: the dialog, the rules screen, the headless refusal and ACP's options all show this one line.
"""

from __future__ import annotations

import posixpath

MAX_NAMED = 4
"""The most entries (a name, or names that differ only in suffix) one line shows."""
MAX_SUFFIXES = 4
"""The most suffixes one entry shows (it says how many more there were)."""

_BRACE_CHARS = frozenset("{},")  # a name holding them would read as a group it is not: shown alone


def _split(name: str) -> tuple[str, str]:
    """A name's stem and suffix (without its dot; ``""``: none), as ``os.path.splitext`` splits the last part."""
    root, ext = posixpath.splitext(name)
    return root, ext[1:]


def _groupable(name: str, ext: str) -> bool:
    return bool(ext) and not _BRACE_CHARS & set(name)


def _entries(names: list[str]) -> list[tuple[str, list[str]]]:
    """The names as entries in their order: ``(name, [])`` alone, ``(stem, suffixes)`` for names that differ
    only in their suffix."""
    groups: dict[str, list[str]] = {}
    for name in names:
        root, ext = _split(name)
        if _groupable(name, ext):
            groups.setdefault(root, []).append(ext)
    out: list[tuple[str, list[str]]] = []
    placed: set[str] = set()
    for name in names:
        root, ext = _split(name)
        if _groupable(name, ext) and len(groups[root]) > 1:
            if root not in placed:
                placed.add(root)
                out.append((root, groups[root]))
        else:
            out.append((name, []))
    return out


def _entry_text(stem: str, suffixes: list[str]) -> str:
    if not suffixes:
        return stem
    shown = ",".join(suffixes[:MAX_SUFFIXES])
    more = f",… {len(suffixes) - MAX_SUFFIXES} more" if len(suffixes) > MAX_SUFFIXES else ""
    return f"{stem}.{{{shown}{more}}}"


def listed(names: list[str]) -> str:
    """``names`` in one line: names that differ only in suffix as ``fig.{png,pdf,…}``, at most ``MAX_NAMED``
    entries, then how many names more (``and 3 more``)."""
    names = list(dict.fromkeys(names))
    entries = _entries(names)
    shown = entries[:MAX_NAMED]
    text = ", ".join(_entry_text(stem, suffixes) for stem, suffixes in shown)
    hidden = len(names) - sum(max(1, len(suffixes)) for _, suffixes in shown)
    return text + (f" and {hidden} more" if hidden > 0 else "")


__all__ = ["MAX_NAMED", "MAX_SUFFIXES", "listed"]
