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

_ID = r"[A-Za-z_][A-Za-z0-9_]*"
_LAYOUT = (
    re.compile(r"mcptools/__init__\.py"),
    re.compile(rf"mcptools/{_ID}/{_ID}\.py"),
    re.compile(r"gentools/__init__\.py"),
    re.compile(rf"gentools/{_ID}/__init__\.py"),
    re.compile(rf"gentools/{_ID}/{_ID}/(__init__|api)\.py"),
)


def is_app_layout(rel: str) -> bool:
    """``rel`` (a path below the generated root, ``/``-separated) is where the app writes generated code."""
    return any(pattern.fullmatch(rel) for pattern in _LAYOUT)


__all__ = ["is_app_layout"]
