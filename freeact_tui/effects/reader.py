"""A conservative static reading of an action into what it does (``freeact_tui.effects.classes``).

A code action is read as IPython runs it: transformed by IPython's own input transformers first
(``ipython_input``: prompts stripped, magics and escapes turned into the calls IPython makes), then each
magic and shell call read by the table below. A cell magic on its first line decides the whole cell
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
import stat
from pathlib import Path

from freeact_tui.effects.classes import Found, Kind, Reading, reading
from freeact_tui.effects.ipython_input import MagicCall, magic_call, transformed
from freeact_tui.effects.kept import TRUSTED_NAMES, kept_names
from freeact_tui.effects.known import PLOT_BACKENDS
from freeact_tui.effects.magics import NO_VAR_EXPAND, expands, magic_words, writefile_target
from freeact_tui.effects.pycode import read_python
from freeact_tui.project.app_state import app_state_touched
from freeact_tui.project.paths import CONFIGURES_CODE, configures_tools, runs_later
from freeact_tui.project.wide_folders import why_too_wide
from freeact_tui.reach.named_paths import named_paths
from freeact_tui.shell.gitreads import is_secret_name
from freeact_tui.shell.programs import run_commands
from freeact_tui.shell.words import split_command
from freeact_tui.toolcalls import CodeAction, ShellAction, ShellScript, ToolCall

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
"""An RFC 3986 scheme and its colon, as URL-aware readers (pandas, fsspec, urllib) take it."""
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})
_SHELL_CELL_MAGICS = frozenset({"bash", "sh", "script", "system"})
_PYTHON_LINE_MAGICS = frozenset({"time", "timeit"})
_HARMLESS_LINE_MAGICS = frozenset({"matplotlib", "precision", "pprint"})


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


SYSTEM_FOLDERS = frozenset(
    {"/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt", "/proc", "/root", "/run", "/sbin",
     "/srv", "/sys", "/usr", "/var"}
)  # fmt: skip
"""Folders too wide to bound "in this folder": the system's own, and (``too_wide``) any that holds a home."""


def too_wide(root: str) -> bool:
    """``root`` (real) is no project folder: the file system's root, a system folder or one inside a system
    tree, a folder every user may write to, another user's, or one that holds the user's home
    (``project.wide_folders``: by structure; a rule saved as "inside this folder" must not reach the whole
    disk from ``cwd: /``, nor every user's files from ``/var/tmp``)."""
    system = SYSTEM_FOLDERS | {os.path.realpath(f) for f in SYSTEM_FOLDERS}  # /bin -> /usr/bin
    return root in system or why_too_wide(root) is not None


class _Paths:
    """Judges constant paths against one working folder (none, when the folder is ``too_wide``: every
    path is then outside it)."""

    def __init__(self, working_dir: Path) -> None:
        self.working_dir = working_dir
        self.root = os.path.realpath(working_dir)
        self.wide = too_wide(self.root)

    def check(self, raw: str, kind: Kind) -> list[Found]:
        if kind == Kind.RELINKS:
            return self._moved(raw)
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
        if own := _app_state(kind, [full, *(p.path for p in reached)], self.root):
            return own
        if reached or self.wide or not _within(full, self.root) or raw.startswith("~"):
            return [Found(Kind.OUTSIDE, p.path) for p in reached] or [Found(Kind.OUTSIDE, full)]
        if _other_names(full):
            # a hard link: the same file may have a name outside the folder (``~/.bashrc``); a sandbox does not
            # keep it in either (it is the very file), and the link outlives a kernel reset
            return [Found(Kind.OUTSIDE, f"{os.path.relpath(full, self.root)} (a file with another name, maybe outside)")]
        if kind == Kind.WRITES and full == self.root:
            # the folder's own entry is in the folder above it: removing, moving or changing the folder
            # itself (``shutil.rmtree('.')``, ``os.removedirs``'s last step) is never work inside it
            return [Found(Kind.OUTSIDE, full)]
        shown = os.path.relpath(full, self.root)
        if kind == Kind.WRITES and (runs_later(shown) or configures_tools(shown)):
            # git's hooks and config, the app's files, importable code, a tool's configuration (dot-named)
            return [Found(Kind.CONTROLS, shown)]
        if is_secret_name(shown):
            return [Found(Kind.ENVIRONMENT, shown)]  # ``.git/config``, ``.netrc``: the one secret table
        return [Found(kind, shown)]


    def _moved(self, raw: str) -> list[Found]:
        """The source of a move: a regular file (not a link) is written where it is; anything else (a folder,
        a symlink, a name that is not there yet) changes where paths through it lead (``Kind.RELINKS``)."""
        found = self.check(raw, Kind.WRITES)
        try:
            named = os.path.join(self.root, os.path.expanduser(raw))
            regular = os.path.isfile(named) and not os.path.islink(named)
        except (OSError, ValueError):
            regular = False
        if regular:
            return found
        shown = os.path.relpath(os.path.normpath(named), self.root) if _within(named, self.root) else raw
        return [f for f in found if f.kind != Kind.WRITES] + [Found(Kind.RELINKS, shown)]


def _app_state(kind: Kind, where: list[str], root: str) -> list[Found]:
    """The app's own state a path touches (``project.app_state``), whatever the working folder: never work
    inside it. A write there changes what runs unasked from then on, so no class allows it (``CONTROLS``);
    a read there is outside the folder. A write of a folder of the working folder that holds it (removing or
    moving ``H`` from the folder above ``H/config``) touches it too (outside the folder such a write is no
    in-folder work anyway)."""
    writes = kind == Kind.WRITES
    touched = [
        (path, own)
        for path in where
        if (own := app_state_touched(path, writes=writes and _within(path, root))) is not None
    ]
    return [
        Found(Kind.CONTROLS if writes else Kind.OUTSIDE, f"{own.what}: {path}") for path, own in touched
    ]


def _other_names(full: str) -> bool:
    """Whether ``full`` is a file (not a folder) with more than one name: a hard link, which may be a file
    outside the working folder by another name."""
    try:
        status = os.stat(full)
    except (OSError, ValueError):
        return False
    return not stat.S_ISDIR(status.st_mode) and status.st_nlink > 1


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


class _Stop(Exception):
    """A magic or shell call the reading cannot tell: so is the whole cell."""

    def __init__(self, found: Found) -> None:
        super().__init__(found.what)
        self.found = found


class _Magics(ast.NodeTransformer):
    """Puts in place of each magic and shell statement of a transformed cell the Python it stands for
    (``%time`` its line, a harmless magic ``pass``), noting the programs shell calls run. ``strict``: a
    magic that cannot be told stops the reading (else it stands for ``pass``: the names a cell keeps)."""

    def __init__(self, *, strict: bool) -> None:
        self.found: list[Found] = []
        self.strict = strict

    def _stop(self, found: Found) -> None:
        if self.strict:
            raise _Stop(found)

    def _shell(self, command: str) -> None:
        if expands(command):
            self._stop(Found(Kind.UNKNOWN, "a shell line IPython expands ({…} or $name runs first)"))
        self.found += _programs(command)

    def visit_Expr(self, node: ast.Expr) -> ast.AST | list[ast.stmt]:
        call = magic_call(node.value)
        if call is None:
            return self.generic_visit(node)
        if call.method in ("system", "getoutput"):
            self._shell(call.line)
        elif call.method == "run_line_magic":
            stands_for = _line_magic("", call.name, call.line)
            if isinstance(stands_for, str):
                try:
                    return ast.parse(stands_for).body or [ast.Pass()]
                except (SyntaxError, ValueError):
                    self._stop(Found(Kind.UNKNOWN, f"%{call.name} of code that does not parse as Python"))
            else:
                self._stop(stands_for)
        else:
            self._stop(Found(Kind.UNKNOWN, f"the cell magic %%{call.name} inside a cell"))
        return ast.Pass()

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        call = magic_call(node.value)
        if call is None:
            return self.generic_visit(node)
        if call.method == "getoutput":  # ``x = !cmd``
            self._shell(call.line)
        elif call.method == "run_line_magic" and call.name not in _PYTHON_LINE_MAGICS:
            stands_for = _line_magic("", call.name, call.line)
            if isinstance(stands_for, Found):
                self._stop(stands_for)
        else:
            self._stop(Found(Kind.UNKNOWN, f"the value of the magic %{call.name}"))
        node.value = ast.List(elts=[], ctx=ast.Load())
        return node


def _whole_cell_magic(tree: ast.Module) -> MagicCall | None:
    """The cell magic a cell is (IPython makes a cell whose first line is ``%%name`` one call of it)."""
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr):
        call = magic_call(tree.body[0].value)
        if call is not None and call.method == "run_cell_magic":
            return call
    return None


def _read_code(code: str, paths: _Paths) -> list[Found]:
    """A cell read as IPython runs it: transformed by IPython's own input transformers (``ipython_input``)."""
    python = transformed(code)
    try:
        if python is None:
            raise SyntaxError("IPython refuses the cell")
        tree = ast.parse(python)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [Found(Kind.UNKNOWN, "code that does not parse as Python")]
    whole = _whole_cell_magic(tree)
    if whole is not None:
        return _cell_magic(whole.name, whole.line.strip(), whole.body, paths)
    magics = _Magics(strict=True)
    try:
        tree = ast.fix_missing_locations(magics.visit(tree))
    except _Stop as stop:
        return [stop.found]
    shadowed = sorted(_shadowed(tree, paths.root))
    if shadowed:
        return [Found(Kind.UNKNOWN, f"imports {shadowed[0]}, which this folder has a file of its own for")]
    configured = _configured(tree, paths.root)
    if configured is not None:
        return [configured]
    return magics.found + read_python(tree, paths.check)


def _imported(tree: ast.Module) -> set[str]:
    """The top-level modules a cell imports (``matplotlib`` of ``import matplotlib.pyplot as plt``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def _shadowed(tree: ast.Module, root: str) -> set[str]:
    """Imported top-level names a file or package in the folder would provide instead (its code runs)."""
    suffixes = ("", *importlib.machinery.all_suffixes())
    return {n for n in _imported(tree) if any(os.path.exists(os.path.join(root, n + ext)) for ext in suffixes)}


def _configured(tree: ast.Module, root: str) -> Found | None:
    """A module the cell uses that reads a configuration file the folder holds (``paths.CONFIGURES_CODE``:
    ``matplotlibrc`` names modules to import and programs to run): what runs is the file's to say."""
    imported = _imported(tree)
    for name, configures in CONFIGURES_CODE.items():
        users = sorted(imported & set(configures.read_by))
        if users and os.path.lexists(os.path.join(root, name)):
            return Found(Kind.UNKNOWN, f"uses {users[0]}, which reads this folder's {name}")
    return None


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
    try:
        tree = _python_tree(call.code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return TRUSTED_NAMES
    if tree is None:
        return frozenset()
    return frozenset(kept_names(tree) & TRUSTED_NAMES)


def _python_tree(code: str) -> ast.Module | None:
    """The Python a cell runs, as IPython transforms it, its magics and shell calls as what they stand for
    (``None``: a cell magic runs no Python; raises ``SyntaxError``: no Python to read)."""
    python = transformed(code)
    if python is None:
        raise SyntaxError("IPython refuses the cell")
    tree = ast.parse(python)
    whole = _whole_cell_magic(tree)
    if whole is not None:
        return _python_tree(whole.body) if whole.name in _PYTHON_CELL_MAGICS else None
    return ast.fix_missing_locations(_Magics(strict=False).visit(tree))


def _read(call: ToolCall, working_dir: Path, bound: frozenset[str] = frozenset()) -> Reading:
    paths = _Paths(working_dir)
    match call:
        case CodeAction(code=code):
            try:
                tree = _python_tree(code)
                used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} if tree else set()
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
