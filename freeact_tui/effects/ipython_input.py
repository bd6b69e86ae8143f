"""What IPython runs for a cell: the Python its own input transformers make of the text, and the magic
and shell calls in it.

IPython does not run the text a cell was typed as: ``TransformerManager.transform_cell`` first strips
prompts (``>>> ``, ``... ``: and a ``>>>`` line anywhere, even inside a string, makes it strip ``... ``
from every line), turns ``%magic``, ``%%magic``, ``!cmd``, ``x = !cmd``, ``obj?`` and the ``/ , ;``
escapes into Python, and only then parses. So the reading transforms the cell with the same transformer
(IPython's own, the version the kernel runs) and reads the result: every magic IPython would run
appears as the call it makes, ``get_ipython().run_line_magic(name, line)``,
``run_cell_magic(name, line, body)``, ``system(cmd)`` or ``getoutput(cmd)``.

IPython is imported on the first reading, not with the app (it takes a noticeable part of a second).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from typing import Any

MAGIC_METHODS = frozenset({"run_line_magic", "run_cell_magic", "system", "getoutput"})


@dataclass(frozen=True)
class MagicCall:
    """One call IPython's transformers made of a magic or shell line."""

    method: str
    """``run_line_magic``, ``run_cell_magic``, ``system`` or ``getoutput``."""
    name: str
    """The magic's name (a shell call: empty)."""
    line: str
    """The magic's line after its name, or the shell command."""
    body: str = ""
    """A cell magic's body."""


@cache
def _manager() -> Any:
    from IPython.core.inputtransformer2 import TransformerManager  # noqa: PLC0415 - lazy: import cost

    return TransformerManager()


def transformed(code: str) -> str | None:
    """The Python IPython runs for ``code`` (``None``: its transformers refuse the text)."""
    try:
        return str(_manager().transform_cell(code))
    except Exception:  # noqa: BLE001 - whatever IPython refuses, the reading cannot tell
        return None


def magic_call(node: ast.AST | None) -> MagicCall | None:
    """``get_ipython().<magic method>("…", …)`` with constant strings, as the transformers write it."""
    match node:
        case ast.Call(
            func=ast.Attribute(
                value=ast.Call(func=ast.Name(id="get_ipython"), args=[], keywords=[]), attr=method
            ),
            args=args,
            keywords=[],
        ) if method in MAGIC_METHODS and all(
            isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args
        ):
            words = [a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if method in ("system", "getoutput") and len(words) == 1:
                return MagicCall(method, "", words[0])
            if method == "run_line_magic" and len(words) == 2:
                return MagicCall(method, words[0], words[1])
            if method == "run_cell_magic" and len(words) == 3:
                return MagicCall(method, words[0], words[1], words[2])
    return None


def magics_in(tree: ast.AST) -> list[MagicCall]:
    """Every magic or shell call in a transformed cell, wherever it stands."""
    return [call for node in ast.walk(tree) if (call := magic_call(node)) is not None]


__all__ = ["MAGIC_METHODS", "MagicCall", "magic_call", "magics_in", "transformed"]
