"""How each name of a cell is bound, and at which uses the reading may trust the value a binding gave.

A name's value is *known* (a module it imports, a constant, a function whose body is read) only at a use
that the binding definitely ran before (``flow``) and when nothing else in the cell can rebind it: the
name is bound once in the whole cell, by a statement of its top level. A name bound in a branch, a loop,
a ``try``, a function or class body, a comprehension, by a walrus, ``global`` or ``+=``, or bound twice,
has no known value; an import anywhere but the top level cannot be told at all.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from freeact_tui.effects.flow import binds, definite_uses
from freeact_tui.effects.settings import CannotTell


@dataclass
class Bindings:
    """How each name of the cell is bound, anywhere in it (scopes merged: the cautious side)."""

    imports: dict[str, list[str]] = field(default_factory=dict)
    defs: dict[str, int] = field(default_factory=dict)
    lambdas: dict[str, int] = field(default_factory=dict)
    other: dict[str, int] = field(default_factory=dict)
    constants: dict[str, ast.expr] = field(default_factory=dict)
    definite: frozenset[int] = frozenset()
    """The name uses (node ids) whose value a binding of the cell definitely gave (``flow``)."""
    single: frozenset[str] = frozenset()
    """Names bound exactly once in the whole cell, by a statement of its top level."""

    def known(self, node: ast.expr) -> bool:
        """Whether ``node`` is a name whose value here is its one binding's (``single``, run before)."""
        return isinstance(node, ast.Name) and node.id in self.single and id(node) in self.definite

    def constant(self, node: ast.expr) -> ast.expr | None:
        """The expression a name was assigned, where that is its value here (``None``: not known)."""
        return self.constants.get(node.id) if isinstance(node, ast.Name) and self.known(node) else None

    def module(self, node: ast.expr) -> str | None:
        """The module or object an imported name is here (``None``: not an import the cell ran before)."""
        if not isinstance(node, ast.Name) or node.id not in self.imports or id(node) not in self.definite:
            return None
        return self.imports[node.id][0]

    def callable(self, node: ast.expr) -> bool:
        """A name bound only by a ``def``, ``class`` or ``name = lambda`` of the top level, known here:
        its body is read with the cell."""
        if not isinstance(node, ast.Name) or not self.known(node):
            return False
        name = node.id
        return (name in self.defs or name in self.lambdas) and name not in self.other

    def bound(self, name: str) -> bool:
        return any(name in d for d in (self.imports, self.defs, self.lambdas, self.other))


def _targets(node: ast.AST) -> list[str]:
    """The names a target binds (``x`` of ``x = …``; not ``d`` of ``d[k] = …``, an item of a value)."""
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)]


def _other_names(node: ast.AST) -> list[str]:
    """The names ``node`` binds other than by ``def``, ``class``, import or assignment (a loop target, a
    parameter, an ``except`` name, a ``global``, a match capture...)."""
    match node:
        case (
            ast.AugAssign(target=t)
            | ast.AnnAssign(target=t)
            | ast.For(target=t)
            | ast.AsyncFor(target=t)
            | ast.comprehension(target=t)
            | ast.NamedExpr(target=t)
        ):
            return _targets(t)
        case ast.Delete(targets=deleted):
            return [name for t in deleted for name in _targets(t)]
        case ast.withitem(optional_vars=t) if t is not None:
            return _targets(t)
        case ast.Global(names=declared) | ast.Nonlocal(names=declared):
            return list(declared)
        case (
            ast.ExceptHandler(name=str() as name)
            | ast.arg(arg=name)
            | ast.MatchAs(name=str() as name)
            | ast.MatchStar(name=str() as name)
            | ast.MatchMapping(rest=str() as name)
        ):
            return [name]
    return []


def _imported(node: ast.Import | ast.ImportFrom) -> list[tuple[str, str]]:
    """The (local name, imported module or object) pairs an import binds."""
    if isinstance(node, ast.Import):
        return [
            (
                alias.asname or alias.name.split(".")[0],
                alias.name if alias.asname else alias.name.split(".")[0],
            )
            for alias in node.names
        ]
    if node.level or node.module is None or any(a.name == "*" for a in node.names):
        raise CannotTell("imports from the folder or with *")
    return [(alias.asname or alias.name, f"{node.module}.{alias.name}") for alias in node.names]


def _imports_at_top(tree: ast.Module) -> None:
    """An import anywhere but the top level (a branch, a function) may not have run: which module a use of
    the name finds cannot be told."""
    top = {id(stmt) for stmt in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in top:
            names = ", ".join(sorted(binds(node))) or "a module"
            raise CannotTell(f"imports {names} inside a block: which value a use finds cannot be told")


def bind(tree: ast.AST) -> Bindings:
    """How the cell binds each name (raises ``CannotTell``: an import inside a block, a rebound import)."""
    b = Bindings()
    if not isinstance(tree, ast.Module):
        raise CannotTell("code that is not a cell")
    _imports_at_top(tree)

    def count(d: dict[str, int], name: str) -> None:
        d[name] = d.get(name, 0) + 1

    for node in ast.walk(tree):
        match node:
            case ast.FunctionDef(name=name) | ast.AsyncFunctionDef(name=name) | ast.ClassDef(name=name):
                count(b.defs, name)
            case ast.Import() | ast.ImportFrom():
                for local, target in _imported(node):
                    b.imports.setdefault(local, []).append(target)
            case ast.Assign(targets=[ast.Name(id=name)], value=ast.Lambda()):
                count(b.lambdas, name)
            case ast.Assign(targets=targets):
                for t in targets:
                    for name in _targets(t):
                        count(b.other, name)
                if len(targets) == 1 and isinstance(targets[0], ast.Name):
                    b.constants[targets[0].id] = node.value
            case _:
                for name in _other_names(node):
                    count(b.other, name)
    for name, sources in b.imports.items():
        if len(set(sources)) > 1 or name in b.other or name in b.defs or name in b.lambdas:
            raise CannotTell(f"rebinds the imported name {name}")
    _trust(b, tree)
    return b


def _opens(manager: ast.expr, b: Bindings) -> bool:
    """``open(…)`` (the builtin: the cell does not bind ``open``): a file, whose ``with`` swallows no error."""
    match manager:
        case ast.Call(func=ast.Name(id="open")):
            return not b.bound("open")
    return False


def _trust(b: Bindings, tree: ast.Module) -> None:
    """Which values the reading may know: a name bound once in the cell, by a statement of its top level,
    at the uses a binding definitely ran before (``flow``)."""
    top = [name for stmt in tree.body for name in binds(stmt)]
    counts = {n: b.defs.get(n, 0) + b.lambdas.get(n, 0) + b.other.get(n, 0) for n in top}
    b.single = frozenset(n for n in top if top.count(n) == 1 and counts.get(n, 0) == 1 and n not in b.imports)
    b.constants = {n: v for n, v in b.constants.items() if n in b.single and not b.defs.get(n)}
    b.definite = definite_uses(tree, lambda manager: _opens(manager, b))


__all__ = ["Bindings", "bind"]
