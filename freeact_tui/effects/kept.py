"""The names a code action keeps in the kernel for later cells, and those the reading trusts unbound.

The kernel is stateful: a name a cell binds at its top level is what a later cell finds. The reading
(``freeact_tui.effects.pycode``) trusts a few names without the cell binding them (the builtins that
compute, ``open``); a cell that rebinds one reads as "cannot tell", and the permission rules keep the
names of the actions that ran (``PermissionRules.note_ran``), so that a later cell's use of one is not
trusted either.
"""

from __future__ import annotations

import ast

from freeact_tui.effects import known


def kept_names(tree: ast.AST) -> set[str]:
    """The names a cell binds in the kernel's namespace, where later cells find them (its top level:
    assignments of any form, imports, ``def``/``class``, loop, ``with`` and ``except`` targets, walrus,
    ``del``, and any name a function declares ``global``); a function's own locals are not kept."""
    names: set[str] = {n for g in ast.walk(tree) if isinstance(g, ast.Global) for n in g.names}

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            match child:
                case ast.FunctionDef(name=name) | ast.AsyncFunctionDef(name=name) | ast.ClassDef(name=name):
                    names.add(name)
                    continue
                case ast.Lambda():
                    continue
                case ast.ListComp() | ast.SetComp() | ast.DictComp() | ast.GeneratorExp():
                    # only a walrus inside binds outside the comprehension
                    names.update(n.target.id for n in ast.walk(child) if isinstance(n, ast.NamedExpr))
                    continue
                case ast.Name(id=name, ctx=ast.Store() | ast.Del()):
                    names.add(name)
                case ast.Import(names=aliases) | ast.ImportFrom(names=aliases):
                    names.update(a.asname or a.name.split(".")[0] for a in aliases)
                case ast.ExceptHandler(name=str() as name) | ast.MatchAs(name=str() as name):
                    names.add(name)
                case ast.MatchStar(name=str() as name) | ast.MatchMapping(rest=str() as name):
                    names.add(name)
            walk(child)

    walk(tree)
    return names


TRUSTED_NAMES = known.PURE_BUILTINS | known.CHECKED_BUILTINS | {"get_ipython"}
"""The names the reading trusts without the cell binding them: a cell that rebinds one for later cells
(``print = matplotlib.use``) makes every later use of it something else. ``get_ipython`` is what every
magic and shell line calls once IPython transformed the cell (``ipython_input``)."""


__all__ = ["TRUSTED_NAMES", "kept_names"]
