"""The files the app writes under a generated root (``.freeact/generated``), by path (#39, F3).

MCP APIs (``mcp.ptc``): ``mcptools/__init__.py``, ``mcptools/<server>/__init__.py`` and one
``mcptools/<server>/<tool>.py`` per tool; saved tools (``mcp.gentools``, the ``saving-codeacts`` skill):
``gentools/__init__.py``, ``gentools/<category>/__init__.py``, ``gentools/<category>/<tool>/__init__.py``
and ``.../api.py``. Each name a Python identifier. Any other file there (``sitecustomize.py``,
``json.py``, a ``.pth``, a ``__pycache__``) is none of the app's: the trust dialog names each one
(``review``), never summarised among the app's files.
"""

from __future__ import annotations

import re

MCPTOOLS = "mcptools"
"""The package of generated MCP APIs (``mcp.ptc``)."""
GENTOOLS = "gentools"
"""The package of saved tools (``mcp.gentools``)."""
APP_PACKAGES: tuple[str, ...] = (MCPTOOLS, GENTOOLS)
"""The only top-level names the kernel's finder of generated code serves from a generated root
(``execution.kernel.code_finder``): any other top-level file or directory there is never imported."""

_ID = r"[A-Za-z_][A-Za-z0-9_]*"
_LAYOUT = (
    re.compile(rf"{MCPTOOLS}/__init__\.py"),
    re.compile(rf"{MCPTOOLS}/{_ID}/{_ID}\.py"),
    re.compile(rf"{GENTOOLS}/__init__\.py"),
    re.compile(rf"{GENTOOLS}/{_ID}/__init__\.py"),
    re.compile(rf"{GENTOOLS}/{_ID}/{_ID}/(__init__|api)\.py"),
)


def is_app_layout(rel: str) -> bool:
    """``rel`` (a path below the generated root, ``/``-separated) is where the app writes generated code."""
    return any(pattern.fullmatch(rel) for pattern in _LAYOUT)


__all__ = ["APP_PACKAGES", "GENTOOLS", "MCPTOOLS", "is_app_layout"]
