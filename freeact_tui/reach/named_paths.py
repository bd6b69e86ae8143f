"""Which paths a code action names that lead out of the working directory (#30).

Structural and language-independent: the string literals of the Python code (``ast``), the words of
its ``!`` lines, line magics and shell cells, resolved against the working directory (``~``
expanded, braces and globs expanded, every symlink followed: ``pathresolve``). A path counts when it resolves outside the working directory or into
the app's own installation (its package or the site-packages it runs from). It is a warning for
the approval dialog, not a sandbox: a path built at run time is not seen.
"""

from __future__ import annotations

import ast
import os
import re
import sysconfig
from functools import cache
from pathlib import Path

from freeact_tui.reach.globs import shell_path_words
from freeact_tui.reach.resolve import expand_word, root_of, within
from freeact_tui.shell.words import inner_commands, split_command
from freeact_tui.toolcalls import CodeAction, NamedPath, ShellAction, ShellScript, ToolCall

MAX_SHOWN = 8
"""The most paths a warning lists (it says how many more there were)."""

_NOT_FILES = frozenset({"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_MAGIC_LINE = re.compile(r"^\s*(!!?|%(?!%))")
_CELL_MAGIC = re.compile(r"^%%(\w+)(.*)$")
_SHELL_MAGICS = frozenset({"bash", "sh", "script"})
_QUOTED = re.compile(r"(['\"])([^'\"\n]*)\1")


@cache
def _install_dirs() -> tuple[str, ...]:
    """The app's package and the site-packages of the interpreter it runs on, symlinks resolved."""
    here = Path(__file__).resolve().parents[1]
    found = [str(here)]
    for key in ("purelib", "platlib"):
        found.append(os.path.realpath(sysconfig.get_paths()[key]))
    return tuple(dict.fromkeys(found))


def _path_like(text: str) -> bool:
    """A literal that could name a file: one word, not a URL or a stream (a relative one may be a symlink)."""
    if not text or len(text) > 4096 or any(c.isspace() or not c.isprintable() for c in text):
        return False
    if text.startswith("//") or "://" in text or text in _NOT_FILES or text.startswith("/dev/fd/"):
        return False  # a URL or a stream, not a file
    # "/" alone is a separator far more often than the root; "~" and ".." are places; a glob (``*``) may
    # match a symlink that leads out
    places = any(s in ("~", "..") for s in text.split("/"))
    return any(c.isalnum() for c in text) or places or any(c in "*?[" for c in text)


def _python_strings(code: str) -> list[str]:
    """String literals that may start a path: not the right operand of ``+`` nor the middle of an f-string."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):  # IPython syntax such as ``x = !ls /etc``: quoted text and words
        return [m.group(2) for m in _QUOTED.finditer(code)] + code.split()
    suffixes: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            suffixes.add(id(node.right))  # ``base + "/users"``: a suffix, not a path of its own
        elif isinstance(node, ast.JoinedStr):
            suffixes.update(id(part) for part in node.values[1:])
    found = sorted(
        (n.lineno, n.col_offset, n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in suffixes
    )
    return [value for _, _, value in found]  # in source order


def _shell_words(script: str) -> list[str]:
    """Argument words of every simple command of a shell text (substitutions included)."""
    words: list[str] = []
    for part in split_command(script):
        for command in (part, *inner_commands(part)):
            words += shell_path_words(command)
    return words


def _code_words(code: str) -> list[str]:
    """Candidate paths of a cell: Python literals, and the shell words of its ``!``/``%`` lines and shell cells."""
    lines = code.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and (magic := _CELL_MAGIC.match(lines[first])):
        body = "\n".join(lines[first + 1 :])
        # ``%%writefile ../x.py``: the magic's own arguments may name a path
        args = _shell_words(f"{magic.group(1)} {magic.group(2)}")
        return args + (_shell_words(body) if magic.group(1) in _SHELL_MAGICS else [])
    words: list[str] = []
    python: list[str] = []
    for line in lines:
        if escape := _MAGIC_LINE.match(line):
            words += _shell_words(line[escape.end() :])  # ``%cd /etc`` reads as the command ``cd /etc``
            python.append(line[: len(line) - len(line.lstrip())] + "pass")  # keeps the block structure
        else:
            python.append(line)
    return _python_strings("\n".join(python)) + words


def candidate_paths(call: ToolCall) -> list[str]:
    """The literals and words of a code, shell or script action that may name files."""
    match call:
        case CodeAction(code=code):
            raw = _code_words(code)
        case ShellAction(command=command):
            raw = _shell_words(command)
        case ShellScript(script=script):
            raw = _shell_words(script)
        case _:
            return []
    return [w for w in dict.fromkeys(raw) if _path_like(w)]


def named_paths(call: ToolCall, working_dir: Path) -> tuple[NamedPath, ...]:
    """Paths ``call`` names that resolve outside ``working_dir`` or into the app's installation.

    Args:
        call: a code action, a shell command or a shell script (other calls name no paths here).
        working_dir: where relative paths resolve (the kernel's working directory).

    Returns:
        Each resolved path once, in the order named.
    """
    root = root_of(working_dir)
    found: dict[str, NamedPath] = {}
    for raw in candidate_paths(call):
        for where in expand_word(raw, working_dir)[1]:
            full = where.path
            install = any(within(full, d) for d in _install_dirs())
            if (install or not where.certain or not within(full, root)) and full not in found:
                found[full] = NamedPath(full, app_install=install)
    return tuple(found.values())


def describe(paths: tuple[NamedPath, ...]) -> list[str]:
    """The warning as lines: a heading, then one path a line (what a dialog and a headless run show)."""
    if not paths:
        return []
    outside = any(not p.app_install for p in paths)
    install = any(p.app_install for p in paths)
    if outside and install:
        head = "⚠ Names paths outside the working directory and in the app's own installation:"
    elif install:
        head = "⚠ Names paths in the app's own installation:"
    else:
        head = "⚠ Names paths outside the working directory:"
    lines = [head] + [
        f"  {p.path}" + ("  (the app's own installation)" if p.app_install else "") for p in paths[:MAX_SHOWN]
    ]
    return lines + ([f"  … {len(paths) - MAX_SHOWN} more"] if len(paths) > MAX_SHOWN else [])


__all__ = ["MAX_SHOWN", "candidate_paths", "describe", "named_paths"]
