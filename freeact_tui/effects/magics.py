"""A magic's arguments as IPython sees them, read in one place for every magic, line and cell.

IPython expands a magic line before the magic runs (``InteractiveShell.var_expand`` with its
``DollarFormatter``): ``{expr}`` is evaluated as Python and ``$name`` is looked up and formatted, in
the kernel, whatever the magic then does with the words (``%pprint {os.system('id')}`` runs the
call). Only ``%time``, ``%timeit`` and ``%prun`` are exempt (``no_var_expand``); their line is Python,
read as such. A shell line (``!cmd``) is expanded the same way. So any ``{``, ``}`` or ``$`` in a line
IPython expands makes the line "cannot tell": the expansion is code the reading does not see.

The words are then split as IPython's ``magic_arguments`` split them (``arg_split``: ``shlex`` in its
non-POSIX mode, quotes kept in the word), and ``%%writefile`` strips one pair of quotes off its file
name by its own pattern, so that the path judged is the path IPython writes.
"""

from __future__ import annotations

import re
import shlex

_EXPANDS = re.compile(r"[{}$]")
_QUOTED_FILENAME = re.compile(r"^('.*')|(\".*\")$")  # IPython's OSMagics.writefile, as written there
_APPEND_FLAGS = frozenset({"-a", "--append", "--appen", "--appe", "--app", "--ap", "--a"})

NO_VAR_EXPAND = frozenset({"time", "timeit", "prun"})
"""The magics IPython does not expand (``@no_var_expand``): their line is Python."""


def expands(line: str) -> bool:
    """Whether IPython would evaluate something in ``line`` before the magic or shell command runs."""
    return bool(_EXPANDS.search(line))


def magic_words(args: str) -> list[str] | None:
    """The words of a magic's arguments as ``magic_arguments`` gives them to the magic (``None``: an
    expansion runs code first, or the words do not split, so IPython refuses or reads them otherwise)."""
    if expands(args):
        return None
    lexer = shlex.shlex(args, posix=False)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        return None


def writefile_target(args: str) -> tuple[str, bool] | None:
    """The file ``%%writefile ARGS`` writes and whether it appends (``None``: cannot tell which file)."""
    words = magic_words(args)
    if words is None:
        return None
    append = any(w in _APPEND_FLAGS for w in words)
    names = [w for w in words if w not in _APPEND_FLAGS]
    if len(names) != 1 or names[0].startswith("-") or not names[0]:
        return None
    name = names[0]
    if _QUOTED_FILENAME.match(name):
        name = name[1:-1]
    return (name, append) if name else None


__all__ = ["NO_VAR_EXPAND", "expands", "magic_words", "writefile_target"]
