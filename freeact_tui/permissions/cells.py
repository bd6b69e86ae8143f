"""Exact-cell rules: a remembered "always allow" for code that matches the very cell the user saw.

A prefix or glob on Python lets any code follow the part it names, so the approval dialog saves
``cell:<fingerprint>`` instead: a digest of the cell's syntax tree (comments, blank lines and
formatting aside; any other change is a different cell). Code that is not Python (IPython ``!``
lines, ``%%bash`` scripts) is fingerprinted on its text with trailing spaces and blank lines removed.
"""

from __future__ import annotations

import ast
import hashlib

from freeact_tui.reach.breadth import CELL_PREFIX, is_cell_pattern

_DIGEST_CHARS = 32


def cell_fingerprint(code: str) -> str:
    """The digest two cells share exactly when they run the same code."""
    try:
        canonical = "ast:" + ast.dump(ast.parse(code))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        lines = [line.rstrip() for line in code.strip("\n").splitlines() if line.strip()]
        canonical = "text:" + "\n".join(lines)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:_DIGEST_CHARS]


def cell_pattern(code: str) -> str:
    """The rule pattern that matches ``code`` and no other cell."""
    return CELL_PREFIX + cell_fingerprint(code)


def cell_matches(pattern: str, code: str) -> bool:
    """Whether an exact-cell ``pattern`` was made from this very cell."""
    return is_cell_pattern(pattern) and pattern == cell_pattern(code)


__all__ = ["CELL_PREFIX", "cell_fingerprint", "cell_matches", "cell_pattern", "is_cell_pattern"]
