"""No tool or bench keeps a copy of a repository file in a string (a template that drifts from the file it
copies, as ``tools/restructure.py`` once kept ``tests/fast/conftest.py``): a tool reads the file instead.

A copy is ``WINDOW`` consecutive non-blank lines of a string literal that stand, in the same order, in a file
of the package or the tests. The scan is checked on generated copies: any slice of any such file, put in
a string of a made-up tool, is found.
"""

from __future__ import annotations

import ast
import hashlib
from functools import cache
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[3]
WINDOW = 8
"""Lines in a row that make a copy (short enough for a pasted function, long enough for no idiom)."""
TOOLS = sorted([*(ROOT / "tools").glob("*.py"), *(ROOT / "bench").glob("*.py")])
SOURCES = sorted(
    p for folder in ("freeact_tui", "tests") for p in (ROOT / folder).rglob("*.py") if "__snapshots__" not in p.parts
)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _windows(lines: list[str]) -> set[str]:
    return {
        hashlib.sha1("\n".join(lines[i : i + WINDOW]).encode()).hexdigest() for i in range(len(lines) - WINDOW + 1)
    }


@cache
def source_windows() -> frozenset[str]:
    found: set[str] = set()
    for path in SOURCES:
        found |= _windows(_lines(path.read_text(encoding="utf-8")))
    return frozenset(found)


def copies(source: str) -> list[int]:
    """Lines of ``source`` where a string literal holds ``WINDOW`` lines of a file of the package or the tests."""
    known = source_windows()
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _windows(_lines(node.value)) & known
    )


def test_no_tool_keeps_a_copy_of_a_file() -> None:
    found = [f"{path.relative_to(ROOT)}:{line}" for path in TOOLS for line in copies(path.read_text(encoding="utf-8"))]
    assert found == []


def _with_enough_lines(path: Path) -> bool:
    return len(_lines(path.read_text(encoding="utf-8"))) >= WINDOW


@settings(max_examples=50, deadline=None)
@given(path=st.sampled_from([p for p in SOURCES if _with_enough_lines(p)]), data=st.data())
def test_the_scan_finds_any_slice_of_any_file(path: Path, data: st.DataObject) -> None:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    nonblank = [i for i, line in enumerate(lines) if line.strip()]
    start = data.draw(st.integers(0, len(nonblank) - WINDOW), label="start")
    end = data.draw(st.integers(start + WINDOW - 1, len(nonblank) - 1), label="end")
    piece = "\n".join(lines[nonblank[start] : nonblank[end] + 1])
    tool = f"TEMPLATE = {piece!r}\n"
    assert copies(tool) == [1]


def test_a_string_of_its_own_is_no_copy() -> None:
    own = "\n".join(f"line {i} of a template no file has" for i in range(WINDOW * 2))
    assert copies(f"TEMPLATE = {own!r}\n") == []
