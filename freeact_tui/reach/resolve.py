"""Where a path word really leads: the one resolver every rule judges paths with (#39).

A rule decides by where a path is (inside the working directory or not, a secret or not). The shell
and the kernel follow every symlink in every component, so a rule must too: ``p -> /proc`` makes
``p/1/environ`` the process's environment, ``docs/k -> ~/.ssh`` makes ``docs/k/id_rsa`` a key.

``resolve(raw, working_dir)`` walks the path component by component as the kernel does (realpath
semantics: each symlink's target replaces it, relative targets against the link's directory, ``..``
after resolution, a missing component and everything after it taken as written), with the link count
bounded as Linux bounds it (40); a loop or a deeper chain is *uncertain* and counts as outside.
``expand_word(word, working_dir)`` is what the shell makes of one word (brace expansion and glob
matches, through symlinked directories too), each resolved; more matches than are read counts as
uncertain. ``subject(resolved, working_dir)`` is the form rules match: relative (POSIX) inside the
working directory, absolute outside it.
"""

from __future__ import annotations

import glob
import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

MAX_LINKS = 40
"""Symlinks followed in one path before it counts as a loop (Linux's ``ELOOP`` bound)."""
MAX_MATCHES = 1000
"""Glob matches (and brace expansions) read for one word; a word with more is uncertain."""

_WILDCARDS = frozenset("*?[")
_BRACE = re.compile(r"(?<!\\)\{([^{}]*)\}")
_SEQUENCE = re.compile(r"(-?\w+)\.\.(-?\w+)(?:\.\.(-?\d+))?")


@dataclass(frozen=True)
class Resolved:
    """One path as the kernel would reach it.

    Attributes:
        path: absolute, every symlink of every component followed (as far as it could be).
        certain: ``False`` for a symlink loop or a chain longer than ``MAX_LINKS``, or a glob with
            more matches than were read: nothing can be said of it, so rules count it as outside.
    """

    path: str
    certain: bool = True


def real_path(path: str) -> Resolved:
    """``path`` (absolute) with every symlink of every component followed, component by component."""
    pending = [p for p in reversed(path.split("/")) if p]
    resolved = "/"
    links = 0
    while pending:
        name = pending.pop()
        if name == ".":
            continue
        if name == "..":
            resolved = posixpath.dirname(resolved)
            continue
        candidate = posixpath.join(resolved, name)
        try:
            target = os.readlink(candidate)
        except (OSError, ValueError):  # not a link, missing, not a directory, a NUL byte
            resolved = candidate
            continue
        links += 1
        if links > MAX_LINKS:
            return Resolved(posixpath.join(candidate, *reversed(pending)), certain=False)
        pending.extend(p for p in reversed(target.split("/")) if p)
        if target.startswith("/"):
            resolved = "/"
    return Resolved(resolved)


def root_of(working_dir: Path | str) -> str:
    """The working directory itself, resolved (``/tmp`` may be a link)."""
    return real_path(posixpath.abspath(os.fspath(working_dir))).path


def resolve(raw: str, working_dir: Path | str) -> Resolved:
    """Where the path word ``raw`` (``~`` expanded, relative to ``working_dir``) really leads."""
    full = posixpath.join(posixpath.abspath(os.fspath(working_dir)), os.path.expanduser(raw))
    return real_path(full)


def within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def subject(path: str, root: str) -> str:
    """The form rules match: relative (POSIX) inside ``root`` (``.`` for itself), absolute outside."""
    if path == root:
        return "."
    return path[len(root.rstrip("/")) + 1 :] if within(path, root) else path


def inside(raw: str, working_dir: Path | str) -> bool:
    """Whether the path word ``raw`` leads inside ``working_dir`` (an uncertain path never does)."""
    found = resolve(raw, working_dir)
    return found.certain and within(found.path, root_of(working_dir))


def _alternatives(body: str, limit: int) -> list[str] | None:
    """What one ``{…}`` stands for: a list (``a,b``) or a sequence (``1..3``, ``a..c``, ``1..9..2``)."""
    if "," in body:
        return body.split(",")
    seq = _SEQUENCE.fullmatch(body)
    if seq is None:
        return None
    start, end, step = seq.group(1), seq.group(2), abs(int(seq.group(3) or 1)) or 1
    numeric = start.lstrip("-").isdigit() and end.lstrip("-").isdigit()
    if not numeric and not (len(start) == len(end) == 1):
        return None
    lo, hi = (int(start), int(end)) if numeric else (ord(start), ord(end))
    values = range(lo, hi + 1, step) if lo <= hi else range(lo, hi - 1, -step)
    if len(values) > limit:
        values = values[: limit + 1]
    return [str(v) if numeric else chr(v) for v in values]


def braces(word: str, limit: int = MAX_MATCHES) -> tuple[list[str], bool]:
    """The words bash's brace expansion makes of ``word`` (``a{b,c}`` → ``ab``, ``ac``; ``{1..3}``), and
    whether all fit in ``limit``."""
    out: list[str] = []
    todo = [word]
    while todo:
        current = todo.pop()
        found = ((m, _alternatives(m.group(1), limit)) for m in _BRACE.finditer(current))
        match, alts = next(((m, a) for m, a in found if a is not None), (None, None))
        if match is None or alts is None:
            out.append(current)
        else:
            head, tail = current[: match.start()], current[match.end() :]
            todo += [head + alt + tail for alt in reversed(alts)]
        if len(out) + len(todo) > limit:
            return out, False
    return out, True


def expand_word(word: str, working_dir: Path | str) -> tuple[list[str], list[Resolved]]:
    """What the shell makes of one word: the words it stands for (as written) and where each really leads.

    Returns:
        ``(words, resolved)``: ``word``, its brace expansions and glob matches (relative to
        ``working_dir`` when the pattern is), and each of them resolved; a word with more matches
        than ``MAX_MATCHES`` adds an uncertain entry.
    """
    base = os.fspath(working_dir)
    words, complete = braces(word)
    found = list(dict.fromkeys([word, *words]))
    for w in words:
        if not any(c in w for c in _WILDCARDS):
            continue
        pattern = os.path.expanduser(w)
        root = None if os.path.isabs(pattern) else base
        try:
            for k, match in enumerate(glob.iglob(pattern, root_dir=root)):
                if k >= MAX_MATCHES:
                    complete = False
                    break
                found.append(match)
        except (OSError, ValueError):
            complete = False
    resolved = [resolve(w, base) for w in found]
    if not complete:
        resolved.append(Resolved(resolve(word, base).path, certain=False))
    return found, resolved


__all__ = [
    "MAX_LINKS",
    "MAX_MATCHES",
    "Resolved",
    "braces",
    "expand_word",
    "inside",
    "real_path",
    "resolve",
    "root_of",
    "subject",
    "within",
]
