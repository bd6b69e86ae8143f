"""What permission rules match against: path globs, path arguments of shell commands, code and JSON
arguments, normalised against the working directory. Pure functions; used by ``permissions``.
"""

from __future__ import annotations

import ast
import os
import posixpath
import re
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path
from typing import Any

from freeact_tui.reach.resolve import expand_word, root_of, subject
from freeact_tui.shell.words import command_words

_PATH_ARG = re.compile(r"path|file|dir|folder|^(src|dst|source|destination|target|root|cwd)$", re.I)

_GLOB_TOKEN = re.compile(r"\*\*/|\*\*|\*|\?|\[!?[^]]+\]|.", re.DOTALL)
_GLOB_REGEX = {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}


@lru_cache(maxsize=512)
def path_regex(pattern: str) -> re.Pattern[str]:
    """Translate a path glob: ``**`` crosses ``/``, ``*`` and ``?`` stay within one segment."""
    out: list[str] = []
    for tok in _GLOB_TOKEN.findall(pattern):
        if tok in _GLOB_REGEX:
            out.append(_GLOB_REGEX[tok])
        elif tok.startswith("[") and len(tok) > 2:
            body = "^" + tok[2:-1] if tok[1] == "!" else tok[1:-1].replace("^", "\\^", 1)
            out.append("[" + body.replace("\\", "\\\\") + "]")
        else:
            out.append(re.escape(tok))
    return re.compile("".join(out), re.DOTALL)


def glob_matches(pattern: str, subject: str) -> bool:
    if fnmatchcase(subject, pattern):
        return True
    return pattern.endswith(" *") and fnmatchcase(subject, pattern[:-2])


def normalize_path(raw: str, working_dir: Path) -> str:
    """Relative (POSIX) when inside the working dir, absolute otherwise."""
    full = posixpath.normpath(posixpath.join(working_dir.as_posix(), os.path.expanduser(raw)))
    root = posixpath.normpath(working_dir.as_posix())
    if full == root:
        return "."
    if full.startswith(root.rstrip("/") + "/"):
        return full[len(root.rstrip("/")) + 1 :]
    return full


def expand_path(raw: str, working_dir: Path) -> list[str]:
    """A path argument as rules see it: the word, what the shell expands it to (braces, glob matches),
    each as written and where it really leads (``pathresolve``: every symlink of every component).

    Inside the working directory a path is relative, outside it absolute; a path that cannot be
    resolved (a symlink loop, too many matches) is given absolute, so it counts as outside.
    """
    words, resolved = expand_word(raw, working_dir)
    root = root_of(working_dir)
    paths = [normalize_path(p, working_dir) for p in words]
    paths += [subject(r.path, root) if r.certain else r.path for r in resolved]
    return list(dict.fromkeys(paths))


def shell_path_words(command: str) -> list[str]:
    """Words of a simple command that may name files: arguments, option values, redirect targets."""
    out: list[str] = []
    for w in command_words(command)[1:]:
        if not w or not w.strip(";&|<>()"):
            continue  # an operator such as ``<`` or ``>&``
        if not w.startswith("-"):
            out.append(w)
        elif not w.startswith("--"):
            # a value glued to a short option (``-f.env``, ``-xf/etc/x.tar``, ``-o~/out``)
            out += [w[k:] for k in range(2, len(w)) if k == 2 or w[k] in "/.~"]
        # ``--file=.env``, ``HEAD:.env``: the value may be a path as well
        out += [w.split(sep, 1)[1] for sep in "=:" if sep in w]
    return out


def code_strings(code: str) -> list[str]:
    """String literals of a code action (best effort: IPython syntax falls back to a regex)."""
    try:
        found = [n.value for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Constant)]
    except (SyntaxError, ValueError):
        found = [m.group(2) for m in re.finditer(r"(['\"])([^'\"\n]*)\1", code)]
    return [v for v in found if isinstance(v, str) and v and "\n" not in v and len(v) < 4096]


def json_path_values(args: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key, value in args.items():
        if not _PATH_ARG.search(str(key)):
            continue
        values = value if isinstance(value, list | tuple) else [value]
        out.extend(v for v in values if isinstance(v, str))
    return out
