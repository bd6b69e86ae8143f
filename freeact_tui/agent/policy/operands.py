"""The literal operands of a cell's arithmetic: what an answer may explain a printed result with (#45).

An answer that shows how a printed value came about ("366 days × 24 hours × 3,600 seconds = 31,622,400"
where the output is ``31622400``) names the numbers the code computed it from. Those are the code's
literals, which alone ground nothing (the model writes them, as it writes its reply:
``x = 10982432`` then "10,982,432" states what no output showed); they ground a number of an answer
only beside a number of that answer that the same run printed (``grounding.unchecked_numbers``).

An operand is a number literal that an arithmetic operator applies to (``a * 24``, ``n += 3600``,
``-5``), read from the syntax tree: a literal elsewhere (``range(1000)``, ``x = 10982432``,
``round(v, 2)``) is no operand of what was printed.
"""

from __future__ import annotations

import ast


def _number(node: ast.AST) -> float | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _number(node.operand)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return float(node.value)
    return None


def code_operands(code: str) -> list[float]:
    """The number literals of ``code`` that an arithmetic operator applies to (none if it does not parse)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return []
    found: list[float] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            operands: list[ast.AST] = [node.left, node.right]
        elif isinstance(node, ast.AugAssign):
            operands = [node.value]
        else:
            continue
        found.extend(v for v in map(_number, operands) if v is not None)
    return found


__all__ = ["code_operands"]
