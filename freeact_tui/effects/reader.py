"""A conservative static reading of an action into what it does (``freeact_tui.effects.classes``).

A code action is split as IPython runs it: a cell magic on its first line decides the whole cell
(``%%bash`` runs programs, ``%%writefile PATH`` writes the path, ``%%time``/``%%capture`` run the
Python below, any other magic cannot be told); ``!`` lines run programs (each named); ``%time``
and ``%timeit`` lines run Python; ``%matplotlib`` only sets up plots; any other line magic cannot be
told. The Python is read by ``freeact_tui.effects.pycode``, which understands an allow-list and
nothing else.

Paths are judged where they lead with symlinks followed: through ``pathreach.named_paths`` (the one
check of paths outside the folder and into the app's installation) and by the path's own real
location. Every path the cell names outside the folder counts, used or not (the #30 warning's view).
"""

from __future__ import annotations

import ast
import importlib.machinery
import os
import re
from pathlib import Path

from freeact_tui.effects.classes import Found, Kind, Reading, reading
from freeact_tui.effects.kept import TRUSTED_NAMES, kept_names
from freeact_tui.effects.known import PLOT_BACKENDS
from freeact_tui.effects.magics import NO_VAR_EXPAND, expands, magic_words, writefile_target
from freeact_tui.effects.pycode import read_python
from freeact_tui.project.paths import runs_later
from freeact_tui.reach.named_paths import named_paths
from freeact_tui.shell.programs import run_commands
from freeact_tui.shell.words import split_command
from freeact_tui.toolcalls import CodeAction, ShellAction, ShellScript, ToolCall

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
"""An RFC 3986 scheme and its colon, as URL-aware readers (pandas, fsspec, urllib) take it."""
_CELL_MAGIC = re.compile(r"^%%(\w+)[ \t]*(.*)$")
_SHELL_LINE = re.compile(r"^(\s*)!!?(.*)$")
_LINE_MAGIC = re.compile(r"^(\s*)%(\w+)[ \t]*(.*)$")
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})
_SHELL_CELL_MAGICS = frozenset({"bash", "sh", "script", "system"})
_PYTHON_LINE_MAGICS = frozenset({"time", "timeit"})
_HARMLESS_LINE_MAGICS = frozenset({"matplotlib", "precision", "pprint"})


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


class _Paths:
    """Judges constant paths against one working folder."""

    def __init__(self, working_dir: Path) -> None:
        self.working_dir = working_dir
        self.root = os.path.realpath(working_dir)

    def check(self, raw: str, kind: Kind) -> list[Found]:
        if "://" in raw:
            return [Found(Kind.NETWORK, raw)]
        if _SCHEME.match(raw):
            # ``file:/etc/passwd``, ``s3:bucket/x``: a URL to the library that opens it, not a path in the folder
            return [Found(Kind.UNKNOWN, f"a URL, not a path in this folder: {raw[:40]!r}")]
        try:
            full = os.path.realpath(os.path.join(self.root, os.path.expanduser(raw)))
        except (OSError, ValueError):
            return [Found(Kind.UNKNOWN, f"a path that names no file: {raw[:40]!r}")]
        reached = named_paths(CodeAction(repr(raw)), self.working_dir)
        if reached or not _within(full, self.root) or raw.startswith("~"):
            return [Found(Kind.OUTSIDE, p.path) for p in reached] or [Found(Kind.OUTSIDE, full)]
        shown = os.path.relpath(full, self.root)
        if kind == Kind.WRITES and runs_later(shown):
            return [Found(Kind.CONTROLS, shown)]  # git's hooks and config, the app's files, importable code
        return [Found(kind, shown)]


def _programs(command: str) -> list[Found]:
    found = [
        Found(Kind.PROGRAMS, words[0]) for part in split_command(command) for words in run_commands(part)
    ]
    return found or [Found(Kind.PROGRAMS, command.strip()[:40] or "a shell command")]


def _cell_magic(name: str, args: str, body: str, paths: _Paths) -> list[Found]:
    """A cell magic decides the whole cell, by its arguments as IPython reads them (``magics``)."""
    if name not in NO_VAR_EXPAND and magic_words(args) is None:
        return [
            Found(Kind.UNKNOWN, f"the cell magic %%{name} with arguments IPython expands or reads otherwise")
        ]
    if name in _SHELL_CELL_MAGICS and not args:
        return _programs(body) if body.strip() else []
    if name == "writefile" and (target := writefile_target(args)) is not None:
        return paths.check(target[0], Kind.WRITES)
    if name in _PYTHON_CELL_MAGICS and not args:
        return _read_code(body, paths)
    return [Found(Kind.UNKNOWN, f"the cell magic %%{name}")]


def _line_magic(indent: str, name: str, rest: str) -> str | Found:
    """The Python a line magic stands for in the cell, or why it cannot be told."""
    if name not in NO_VAR_EXPAND and magic_words(rest) is None:
        return Found(Kind.UNKNOWN, f"%{name} with arguments IPython expands or reads otherwise")
    if name in _PYTHON_LINE_MAGICS:
        return indent + rest
    if (
        name == "matplotlib"
        and rest.split()[:1] not in ([], ["-l"], ["--list"])
        and (len(rest.split()) != 1 or rest.strip().lower() not in PLOT_BACKENDS)
    ):
        return Found(Kind.UNKNOWN, f"%matplotlib {rest.strip()[:40]}: names a module to import")
    if name in _HARMLESS_LINE_MAGICS:
        return indent + "pass"
    return Found(Kind.UNKNOWN, f"the magic %{name}")


def _read_code(code: str, paths: _Paths) -> list[Found]:
    lines = code.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and (magic := _CELL_MAGIC.match(lines[first])):
        return _cell_magic(magic.group(1), magic.group(2).strip(), "\n".join(lines[first + 1 :]), paths)
    found: list[Found] = []
    python: list[str] = []
    for line in lines:
        if shell := _SHELL_LINE.match(line):
            if expands(shell.group(2)):
                return [Found(Kind.UNKNOWN, "a shell line IPython expands ({…} or $name runs first)")]
            found += _programs(shell.group(2))
            python.append(shell.group(1) + "pass")  # keeps the block structure
        elif magic := _LINE_MAGIC.match(line):
            stands_for = _line_magic(*magic.groups())
            if isinstance(stands_for, Found):
                return [stands_for]
            python.append(stands_for)
        else:
            python.append(line)
    try:
        tree = ast.parse("\n".join(python))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [Found(Kind.UNKNOWN, "code that does not parse as Python")]
    shadowed = sorted(_shadowed(tree, paths.root))
    if shadowed:
        return [Found(Kind.UNKNOWN, f"imports {shadowed[0]}, which this folder has a file of its own for")]
    return found + read_python(tree, paths.check)


def _shadowed(tree: ast.Module, root: str) -> set[str]:
    """Imported top-level names a file or package in the folder would provide instead (its code runs)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    suffixes = ("", *importlib.machinery.all_suffixes())
    return {n for n in names if any(os.path.exists(os.path.join(root, n + ext)) for ext in suffixes)}


def read_effects(call: ToolCall, working_dir: Path, *, bound: frozenset[str] = frozenset()) -> Reading:
    """What ``call`` does, read without running it. Unknown is never read as safe.

    Args:
        call: a code action, shell command or script (any other call cannot be told here).
        working_dir: the folder the action runs in.
        bound: names earlier actions that ran kept in the kernel (``names_kept``): a use of one the
            reading would otherwise trust (``print``) cannot be told.
    """
    try:
        return _read(call, working_dir, bound)
    except (RecursionError, MemoryError):
        return reading([Found(Kind.UNKNOWN, "too deeply nested to read")])


def names_kept(call: ToolCall) -> frozenset[str]:
    """The trusted names (``kept.TRUSTED_NAMES``) a code action that ran rebinds in the kernel (all of
    them when its Python cannot be read: the cautious side)."""
    if not isinstance(call, CodeAction):
        return frozenset()
    source = _python_source(call.code)
    if source is None:
        return frozenset()
    try:
        names = kept_names(ast.parse(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return TRUSTED_NAMES
    return frozenset(names & TRUSTED_NAMES)


def _python_source(code: str) -> str | None:
    """The Python a cell runs, magics and shell lines as ``pass`` (``None``: a cell magic runs no Python)."""
    lines = code.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and (magic := _CELL_MAGIC.match(lines[first])):
        if magic.group(1) in _PYTHON_CELL_MAGICS:
            return _python_source("\n".join(lines[first + 1 :]))
        return None
    python = []
    for line in lines:
        magic = _LINE_MAGIC.match(line)
        if magic and magic.group(2) in _PYTHON_LINE_MAGICS:
            python.append(magic.group(1) + magic.group(3))
        elif shell := _SHELL_LINE.match(line) or magic:
            python.append(shell.group(1) + "pass")
        else:
            python.append(line)
    return "\n".join(python)


def _read(call: ToolCall, working_dir: Path, bound: frozenset[str] = frozenset()) -> Reading:
    paths = _Paths(working_dir)
    match call:
        case CodeAction(code=code):
            source = _python_source(code)
            try:
                used = (
                    {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}
                    if source
                    else set()
                )
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                used = set()
            earlier = sorted(used & bound & TRUSTED_NAMES)
            if earlier:
                return reading([Found(Kind.UNKNOWN, f"uses {earlier[0]}, which an earlier action rebound")])
            found = _read_code(code, paths)
        case ShellAction(command=text) | ShellScript(script=text):
            found = _programs(text)
        case _:
            found = [Found(Kind.UNKNOWN, f"a {call.kind} call")]
    # every path the action names outside the folder counts, wherever it is used
    outside = [Found(Kind.OUTSIDE, p.path) for p in named_paths(call, working_dir)]
    return reading([*found, *outside])


__all__ = ["names_kept", "read_effects"]
