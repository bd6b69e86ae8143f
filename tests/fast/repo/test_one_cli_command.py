"""Tests start the CLI with one command, ``tests.helpers.CLI`` (and run it with ``tests.helpers.cli``):
none spells ``python -m freeact_tui`` again, so how the CLI is started is changed in one place."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]


def _spelled(tree: ast.AST) -> list[int]:
    """Lines where ``"-m", "freeact_tui"`` stand next to each other in a list, a tuple or a call's arguments."""
    found = []
    for node in ast.walk(tree):
        items = node.elts if isinstance(node, ast.List | ast.Tuple) else node.args if isinstance(node, ast.Call) else []
        values = [i.value if isinstance(i, ast.Constant) else None for i in items]
        if any(a == "-m" and b == "freeact_tui" for a, b in zip(values, values[1:], strict=False)):
            found.append(node.lineno)
    return found


def test_only_the_helpers_spell_the_cli_command() -> None:
    spelled = [
        f"{path.relative_to(TESTS)}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        if path != TESTS / "helpers.py"
        for line in _spelled(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert spelled == []
    assert _spelled(ast.parse((TESTS / "helpers.py").read_text(encoding="utf-8")))  # the one place


def test_the_scan_finds_each_form() -> None:
    source = (
        'a = [sys.executable, "-m", "freeact_tui", "run"]\n'
        'b = (python, "-X", "importtime", "-m", "freeact_tui")\n'
        'exec(python, "-m", "freeact_tui", "acp")\n'
        'c = ["-m", "other"]\n'
    )
    assert _spelled(ast.parse(source)) == [1, 2, 3]
