"""The objects a cell itself makes, and so the only receivers whose methods and attributes the reading follows.

A method is not resolved by its name (``def print_png(self): …`` says nothing of ``fig.canvas.print_png``)
and an attribute is not stored on an object the reading cannot type (``P = pathlib.Path; P.read_text =
P.unlink`` patches the library for every later cell). Both are judged by the receiver:

- an instance of a class the cell defines (``C()``, or a name assigned once to ``C()``), and inside such a
  class's methods their first parameter (``self``): only when the cell's classes are *sealed* — no class
  has bases, keywords or decorators, every use of a class name is a call that makes an instance (never
  ``C.m`` as a value, never ``isinstance(x, C)``), and ``type`` is never used (``type(C()).m`` is the
  unbound method again) — so that ``self`` can only be an instance of one of them;
- on it, a method the cell defines undecorated in a class body (no class body binds the name otherwise),
  and whose name no attribute store of the cell rebinds on any object (``a.head = df.to_pickle``).

Any other receiver of an attribute store (``x.attr = …``, ``del x.attr``) cannot be told.
"""

from __future__ import annotations

import ast
import string
from dataclasses import dataclass


@dataclass(frozen=True)
class CellObjects:
    """What the cell's own classes let the reading trust."""

    classes: frozenset[str] = frozenset()
    """The sealed classes of the cell (empty: the cell's classes are not sealed, nothing is trusted)."""
    methods: frozenset[str] = frozenset()
    """Method names an instance of a sealed class resolves to the cell's own, read, code."""
    selves: frozenset[str] = frozenset()
    """Names that are only ever the first parameter of a method of a sealed class."""
    stored: frozenset[str] = frozenset()
    """Attribute names the cell stores or deletes on any object."""


def _stored(tree: ast.AST) -> frozenset[str]:
    return frozenset(
        n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load)
    )


def _sealed(tree: ast.AST, classes: list[ast.ClassDef]) -> bool:
    names = {c.name for c in classes}
    if any(c.bases or c.keywords or c.decorator_list for c in classes):
        return False
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id == "type" or (node.id in names and id(node) not in called):
                return False
    return True


def _methods(classes: list[ast.ClassDef]) -> tuple[set[str], list[ast.arg]]:
    """The undecorated methods of the classes, minus any name a class body binds otherwise; their ``self``s."""
    defined: set[str] = set()
    other: set[str] = set()
    selves: list[ast.arg] = []
    for cls in classes:
        for stmt in cls.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and not stmt.decorator_list:
                defined.add(stmt.name)
                if stmt.args.posonlyargs or stmt.args.args:
                    selves.append((stmt.args.posonlyargs or stmt.args.args)[0])
            else:
                other |= {
                    n.id
                    for n in ast.walk(stmt)
                    if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
                }
                if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    other.add(stmt.name)
    return defined - other, selves


def cell_objects(tree: ast.AST, bound_otherwise: frozenset[str]) -> CellObjects:
    """The cell's sealed classes, their methods and ``self`` names (``bound_otherwise``: names the cell
    binds other than as a parameter: such a name is never a trusted ``self``)."""
    stored = _stored(tree)
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    if not classes or not _sealed(tree, classes):
        return CellObjects(stored=stored)
    methods, self_args = _methods(classes)
    first = {id(a) for a in self_args}
    params = [n for n in ast.walk(tree) if isinstance(n, ast.arg)]
    selves = {a.arg for a in self_args} - bound_otherwise
    selves = {s for s in selves if all(id(p) in first for p in params if p.arg == s)}
    return CellObjects(
        classes=frozenset(c.name for c in classes),
        methods=frozenset(methods - stored),
        selves=frozenset(selves),
        stored=stored,
    )


def template_follows(template: str) -> bool:
    """Whether a ``str.format`` template reaches into its arguments (``{0.gi_frame}``, ``{d[k]}``), in a
    field or a field nested in a format spec; a template that does not parse counts as reaching."""
    try:
        fields = [(name, spec) for _, name, spec, _ in string.Formatter().parse(template) if name is not None]
    except (ValueError, TypeError):
        return True
    return any("." in name or "[" in name or template_follows(spec or "") for name, spec in fields)


__all__ = ["CellObjects", "cell_objects", "template_follows"]
