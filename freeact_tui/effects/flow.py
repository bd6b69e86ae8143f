"""Where each name a cell uses gets its value: from a binding of the cell that definitely ran before the
use, or from whatever the kernel holds (an earlier cell's value, a name the kernel injected).

The kernel is stateful: ``if False: p = "ok.txt"`` binds nothing when it runs, and ``open(p, "w")`` then
writes wherever an earlier cell pointed ``p``. So a use of a name is the cell's own value only when a
binding of it *definitely* ran before the use, by the structure of the code alone:

- an earlier statement of the same block, or of a block enclosing the use (an assignment, an import, a
  ``def``/``class``, a ``with … as`` target; of a compound statement only what every way through it to
  its end binds: both branches of an ``if``/``else``, the ``try`` body and each handler, a ``with`` body
  whose context manager never swallows an exception — never a loop's body, which may not run), and
  ``del`` unbinds;
- a loop's target inside the loop's body, an ``except … as`` name inside its handler, a ``with`` target
  inside its body, a comprehension's targets inside it;
- ``x += 1`` reads ``x`` first: only a name bound before is the cell's there;
- inside a function or lambda: any name local to it (Python never reads a local from elsewhere: unbound
  it raises), a name of an enclosing function, the function's own name (undecorated: nothing can call it
  before the ``def`` ran), and a global definitely bound before the ``def`` statement (the body runs only
  when called, after the ``def``). A name the function declares ``global`` is bound only by the
  function's own earlier statements. A class body is a block of its enclosing scope; the functions,
  lambdas and comprehensions in it do not see its names.

Walrus targets, ``match`` captures and bindings inside a statement's own expressions are not followed (the
cautious side: the use is the kernel's).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

_FUNCTION = ast.FunctionDef | ast.AsyncFunctionDef
_COMPREHENSION = ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp


def _stored(node: ast.AST | None) -> set[str]:
    """The names a target binds (``a, *b = …``: ``a`` and ``b``; not ``d[k]`` or ``o.x``)."""
    if node is None:
        return set()
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def binds(stmt: ast.stmt) -> set[str]:
    """The names a simple statement has bound once it completed (a compound statement: only its header's)."""
    match stmt:
        case ast.Assign(targets=targets):
            return set().union(*(_stored(t) for t in targets))
        case ast.AnnAssign(target=ast.Name(id=name), value=value) if value is not None:
            return {name}
        case ast.Import(names=aliases):
            return {a.asname or a.name.split(".")[0] for a in aliases}
        case ast.ImportFrom(names=aliases):
            return {a.asname or a.name for a in aliases if a.name != "*"}
        case ast.FunctionDef(name=name) | ast.AsyncFunctionDef(name=name) | ast.ClassDef(name=name):
            return {name}
        case ast.With(items=items) | ast.AsyncWith(items=items):
            return set().union(*(_stored(i.optional_vars) for i in items))
    return set()


def _params(args: ast.arguments) -> set[str]:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return {a.arg for a in every if a is not None}


def _scope_names(body: Iterable[ast.AST]) -> tuple[set[str], set[str], set[str]]:
    """A function's local names, and those it declares ``global`` and ``nonlocal`` (nested scopes aside,
    but a walrus in a comprehension binds in the function)."""
    local: set[str] = set()
    declared_global: set[str] = set()
    declared_nonlocal: set[str] = set()
    todo = list(body)
    while todo:
        node = todo.pop()
        match node:
            case ast.Global(names=names):
                declared_global.update(names)
            case ast.Nonlocal(names=names):
                declared_nonlocal.update(names)
            case ast.FunctionDef(name=name) | ast.AsyncFunctionDef(name=name) | ast.ClassDef(name=name):
                local.add(name)
                todo += [*node.decorator_list]
                continue
            case ast.Lambda():
                continue
            case ast.ListComp() | ast.SetComp() | ast.GeneratorExp() | ast.DictComp():
                local.update(n.target.id for n in ast.walk(node) if isinstance(n, ast.NamedExpr))
                continue
            case ast.Name(id=name, ctx=ast.Store() | ast.Del()):
                local.add(name)
            case ast.Import() | ast.ImportFrom():
                local |= binds(node)
            case ast.ExceptHandler(name=str() as name) | ast.MatchAs(name=str() as name):
                local.add(name)
            case ast.MatchStar(name=str() as name) | ast.MatchMapping(rest=str() as name):
                local.add(name)
        todo += list(ast.iter_child_nodes(node))
    return local - declared_global - declared_nonlocal, declared_global, declared_nonlocal


class _Walk:
    """Marks every name use whose value a binding of the cell definitely gave (``definite``: node ids)."""

    def __init__(self, keeps_errors: Callable[[ast.expr], bool]) -> None:
        self.definite: set[int] = set()
        self.keeps_errors = keeps_errors
        self.class_outer: frozenset[str] | None = None
        """In a class body: what its nested scopes (lambdas, comprehensions) see; they skip its names."""

    def block(
        self, stmts: list[ast.stmt], bound: frozenset[str], seen: frozenset[str] | None = None
    ) -> frozenset[str]:
        """A statement list, in order (``seen``: what functions defined in it see, in a class body); the
        names definitely bound once it completed."""
        names = bound
        for stmt in stmts:
            names = self.stmt(stmt, names, seen)
        return names

    def stmt(self, stmt: ast.stmt, bound: frozenset[str], seen: frozenset[str] | None) -> frozenset[str]:
        """One statement; the names definitely bound once it completed."""
        match stmt:
            case ast.FunctionDef() | ast.AsyncFunctionDef():
                self.exprs([*stmt.decorator_list, *_header(stmt.args), stmt.returns], bound)
                own = set() if stmt.decorator_list else {stmt.name}
                self.function(stmt.args, stmt.body, (bound if seen is None else seen) | own)
            case ast.ClassDef():
                self.exprs([*stmt.bases, *(k.value for k in stmt.keywords), *stmt.decorator_list], bound)
                outer, self.class_outer = self.class_outer, bound if seen is None else seen
                self.block(stmt.body, bound, self.class_outer)
                self.class_outer = outer
            case ast.For() | ast.AsyncFor():
                self.exprs([stmt.iter, stmt.target], bound)
                self.block(stmt.body, bound | _stored(stmt.target), seen)
                self.block(stmt.orelse, bound, seen)
            case ast.While():
                self.exprs([stmt.test], bound)
                self.block(stmt.body, bound, seen)
                self.block(stmt.orelse, bound, seen)
            case ast.If():
                # one branch ran to its end (or the code after the ``if`` does not run): what both bind
                self.exprs([stmt.test], bound)
                return self.block(stmt.body, bound, seen) & self.block(stmt.orelse, bound, seen)
            case ast.With() | ast.AsyncWith():
                self.exprs([x for i in stmt.items for x in (i.context_expr, i.optional_vars)], bound)
                inside = self.block(stmt.body, bound | binds(stmt), seen)
                # a context manager that may swallow an exception skips the rest of its body
                return (
                    inside
                    if all(self.keeps_errors(i.context_expr) for i in stmt.items)
                    else bound | binds(stmt)
                )
            case ast.Try() | ast.TryStar():
                return self.attempt(stmt, bound, seen)
            case ast.Match():
                self.exprs([stmt.subject], bound)
                for case in stmt.cases:
                    self.exprs([case.pattern, case.guard], bound)
                    self.block(case.body, bound, seen)
            case ast.AugAssign(target=ast.Name(id=name) as target):
                # ``x += 1`` reads ``x`` first: the cell's value only where it was bound before
                self.exprs([stmt.value], bound)
                if name in bound:
                    self.definite.add(id(target))
            case ast.Delete():
                self.exprs(stmt.targets, bound)
                return bound - set().union(*(_stored_or_deleted(t) for t in stmt.targets))
            case _:
                self.exprs(list(ast.iter_child_nodes(stmt)), bound)
        return bound | binds(stmt)

    def attempt(
        self, stmt: ast.Try | ast.TryStar, bound: frozenset[str], seen: frozenset[str] | None
    ) -> frozenset[str]:
        """A ``try``: the body and ``else`` ran to their end, or a handler did; the ``finally`` runs either way."""
        ends = [self.block(stmt.orelse, self.block(stmt.body, bound, seen), seen)]
        for handler in stmt.handlers:
            self.exprs([handler.type], bound)
            ends.append(self.block(handler.body, bound | ({handler.name} if handler.name else set()), seen))
        after = frozenset.intersection(*ends) - {h.name for h in stmt.handlers if h.name}
        return after | (self.block(stmt.finalbody, bound, seen) - bound)

    def function(self, args: ast.arguments, body: list[ast.stmt], seen: frozenset[str]) -> None:
        local, declared_global, declared_nonlocal = _scope_names(body)
        inside = (seen - declared_global) | local | declared_nonlocal | _params(args)
        outer, self.class_outer = self.class_outer, None
        self.block(body, frozenset(inside))
        self.class_outer = outer

    def exprs(self, nodes: Iterable[ast.AST | None], bound: frozenset[str]) -> None:
        for node in nodes:
            if node is not None:
                self.expr(node, bound)

    def expr(self, node: ast.AST, bound: frozenset[str]) -> None:
        match node:
            case ast.Name(id=name) if name in bound:
                self.definite.add(id(node))
            case ast.Lambda(args=args, body=body):
                self.exprs(_header(args), bound)
                outer, self.class_outer = self.class_outer, None
                self.expr(body, (bound if outer is None else outer) | _params(args))
                self.class_outer = outer
            case ast.ListComp() | ast.SetComp() | ast.GeneratorExp() | ast.DictComp():
                first, *rest = node.generators
                self.expr(first.iter, bound)
                outer, self.class_outer = self.class_outer, None
                inner = (bound if outer is None else outer) | set().union(
                    *(_stored(g.target) for g in node.generators)
                )
                self.exprs([first.target, *first.ifs], inner)
                for generator in rest:
                    self.exprs([generator.target, generator.iter, *generator.ifs], inner)
                parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
                self.exprs(parts, inner)
                self.class_outer = outer
            case _:
                self.exprs(ast.iter_child_nodes(node), bound)


def _stored_or_deleted(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}


def _header(args: ast.arguments) -> list[ast.expr | None]:
    """What a ``def``/``lambda`` evaluates where it stands: defaults and annotations."""
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return [*args.defaults, *args.kw_defaults, *(a.annotation for a in every if a is not None)]


def definite_uses(tree: ast.Module, keeps_errors: Callable[[ast.expr], bool]) -> frozenset[int]:
    """The ids of the cell's name nodes whose value, when that code runs, a binding of the cell gave
    (``keeps_errors``: whether a ``with`` item's context manager never swallows an exception)."""
    walk = _Walk(keeps_errors)
    walk.block(tree.body, frozenset())
    return frozenset(walk.definite)


__all__ = ["binds", "definite_uses"]
