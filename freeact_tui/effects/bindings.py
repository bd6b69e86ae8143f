"""How each name of a cell is bound, anywhere in it (scopes merged: the cautious side), for the reading."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from freeact_tui.effects.settings import CannotTell


@dataclass
class Bindings:
    """How each name of the cell is bound, anywhere in it (scopes merged: the cautious side)."""

    imports: dict[str, list[str]] = field(default_factory=dict)
    defs: dict[str, int] = field(default_factory=dict)
    lambdas: dict[str, int] = field(default_factory=dict)
    other: dict[str, int] = field(default_factory=dict)
    constants: dict[str, ast.expr] = field(default_factory=dict)

    def callable(self, name: str) -> bool:
        """Bound only by ``def``, ``class`` or ``name = lambda``: its body is read with the cell."""
        return (
            (name in self.defs or name in self.lambdas)
            and name not in self.other
            and name not in self.imports
        )

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


def bind(tree: ast.AST) -> Bindings:
    b = Bindings()

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
    # a constant is a name assigned once, and only so
    b.constants = {n: v for n, v in b.constants.items() if b.other.get(n) == 1 and not b.defs.get(n)}
    for name, sources in b.imports.items():
        if len(set(sources)) > 1 or name in b.other or name in b.defs or name in b.lambdas:
            raise CannotTell(f"rebinds the imported name {name}")
    return b


__all__ = ["Bindings", "bind"]
