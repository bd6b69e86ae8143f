"""The secret files a default-allowed recursive search would read, though no argument names them.

``rg SECRET`` searches the folder recursively: a ``deploy.key`` or ``server.pem`` in it is printed
though no path word names it, so the secret ask rules never see it. ``searched_secrets`` walks the trees
``rg`` searches (its path operands, or the folder) as ``rg`` does by default — hidden files and folders
skipped (``--hidden``, ``-u``, ``-L`` ask already, ``programoptions``) — and names the files of the one
secret table (``gitreads.SECRET_NAMES``) it would read. A tree too large to walk here counts as one
holding a secret: what cannot be told is asked.
"""

from __future__ import annotations

import os
from pathlib import Path

from freeact_tui.shell.gitreads import is_secret_name
from freeact_tui.shell.options import PROGRAM_OPTIONS

WALK_LIMIT = 20_000
"""Files looked at per search; beyond it the search is asked."""


def _operands(args: list[str]) -> tuple[list[str], bool]:
    """rg's operands (pattern and paths) and whether a pattern was given by option (``-e``)."""
    table = PROGRAM_OPTIONS["rg"]
    operands: list[str] = []
    by_option, k = False, 0
    while k < len(args):
        word = args[k]
        k += 1
        if word == "--":
            operands += args[k:]
            break
        if not word.startswith("-") or word == "-":
            operands.append(word)
        elif word.startswith("--"):
            name = word.split("=", 1)[0]
            by_option |= name == "--regexp"
            k += 1 if name in table.long_valued and "=" not in word else 0
        elif word[1:2] in table.valued:
            by_option |= word[1] == "e"
            k += 1 if len(word) == 2 else 0
    return operands, by_option


def searched_secrets(words: list[str], where: Path) -> list[str]:
    """Secret-named files ``rg`` (``words``, program first) would read in ``where``; ``["…"]`` if too many to tell."""
    if not words or words[0] != "rg":
        return []
    operands, by_option = _operands(words[1:])
    paths = operands if by_option else operands[1:]
    found: list[str] = []
    seen = 0
    for raw in paths or ["."]:
        root = where / os.path.expanduser(raw)
        if root.is_file():
            continue  # a named file is a path word the rules already judge
        for top, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for name in files:
                seen += 1
                if seen > WALK_LIMIT:
                    return [f"more than {WALK_LIMIT} files under {raw}"]
                rel = os.path.relpath(os.path.join(top, name), where)
                if not name.startswith(".") and is_secret_name(rel):
                    found.append(rel)
    return found


__all__ = ["WALK_LIMIT", "searched_secrets"]
