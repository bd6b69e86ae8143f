"""freeact 0.11's ``*_MCP_SERVER_CONFIG``: the configs of the tool servers that come with freeact.

``BASIC_SEARCH_MCP_SERVER_CONFIG`` is this app's own discovery server (``python -m
freeact_tui.mcp.pytools_server``, the same answers as freeact's basic one). The others start
freeact's own servers (``python -m freeact.tools…``): they work where freeact is installed; this
app builds in what it needs instead (file tools, basic discovery) and has no search or fetch tools.
"""

from __future__ import annotations

import sys
from typing import Any

FILESYSTEM_MCP_SERVER_CONFIG: dict[str, Any] = {
    "command": "python",
    "args": ["-m", "freeact.tools.filesystem"],
}

# This Python (freeact resolves its internal servers to its own interpreter the same way).
BASIC_SEARCH_MCP_SERVER_CONFIG: dict[str, Any] = {
    "command": sys.executable,
    "args": ["-m", "freeact_tui.mcp.pytools_server"],
    "env": {"PYTOOLS_DIR": "${PYTOOLS_DIR}"},
}

HYBRID_SEARCH_MCP_SERVER_CONFIG: dict[str, Any] = {
    "command": "python",
    "args": ["-m", "freeact.tools.pytools.hybrid"],
    "env": {
        "GEMINI_API_KEY": "${GEMINI_API_KEY}",
        "PYTOOLS_DIR": "${PYTOOLS_DIR}",
        "PYTOOLS_DB_PATH": "${PYTOOLS_DB_PATH}",
        "PYTOOLS_EMBEDDING_MODEL": "${PYTOOLS_EMBEDDING_MODEL}",
        "PYTOOLS_EMBEDDING_DIM": "${PYTOOLS_EMBEDDING_DIM}",
        "PYTOOLS_SYNC": "${PYTOOLS_SYNC}",
        "PYTOOLS_WATCH": "${PYTOOLS_WATCH}",
        "PYTOOLS_BM25_WEIGHT": "${PYTOOLS_BM25_WEIGHT}",
        "PYTOOLS_VEC_WEIGHT": "${PYTOOLS_VEC_WEIGHT}",
    },
}

GOOGLE_SEARCH_MCP_SERVER_CONFIG: dict[str, Any] = {
    "command": "python",
    "args": ["-m", "freeact.tools.gsearch", "--thinking-level", "medium"],
    "env": {"GEMINI_API_KEY": "${GEMINI_API_KEY}"},
}

FETCH_MCP_SERVER_CONFIG: dict[str, Any] = {
    "command": "python",
    "args": ["-m", "freeact.tools.fetch"],
    "env": {},
}
