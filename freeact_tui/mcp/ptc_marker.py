"""Which generated ``mcptools`` packages are ours to regenerate: the marker file we write in each.

The marker holds the config digest a package was generated from and a hash of its modules as
generated. A package without one (freeact made it) or whose modules changed since (edited by hand:
freeact's tool authoring) is the user's: kept as it is, and called with the parameters baked into it
when they name the same server.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
from pathlib import Path
from typing import Any

from freeact_tui.project import files as projectfiles

# Marks a package as ours and records the config it was generated from.
DIGEST_FILE = ".freeact-tui-digest"


def baked_params(package: Path) -> dict[str, Any] | None:
    """The ``server_params`` a generated package's ``__init__.py`` passes to its ``ToolRunner``."""
    try:
        tree = ast.parse(projectfiles.read_text(package / "__init__.py"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "server_params":
            with contextlib.suppress(ValueError, SyntaxError, TypeError):
                value = ast.literal_eval(node.value)
                return value if isinstance(value, dict) else None
    return None


def same_server(a: dict[str, Any], b: dict[str, Any]) -> bool:
    def norm(p: dict[str, Any]) -> tuple[Any, ...]:
        return (
            p.get("command"),
            list(p.get("args") or []),
            dict(p.get("env") or {}),
            p.get("url"),
            dict(p.get("headers") or {}),
        )

    return norm(a) == norm(b)


def files_hash(package: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(package.glob("*.py")):
        h.update(path.name.encode() + b"\0" + projectfiles.read_bytes(path) + b"\0")
    return h.hexdigest()


def read_marker(package: Path) -> tuple[str, str] | None:
    """(config digest, hash of the modules as generated) from our marker file; ``None`` without one."""
    try:
        lines = projectfiles.read_text(package / DIGEST_FILE, errors="replace").splitlines()
    except OSError:
        return None
    return (lines[0] if lines else "", lines[1] if len(lines) > 1 else "")


def ours_unedited(package: Path) -> bool:
    """Whether we generated ``package`` and nobody changed its modules since."""
    marker = read_marker(package)
    if marker is None:
        return False
    if not marker[1]:
        return True  # a marker from before edits were tracked: regenerated as before
    try:
        return marker[1] == files_hash(package)
    except OSError:
        return False
