"""The basic discovery tools as a stdio MCP server, like freeact's ``freeact.tools.pytools.basic``.

``python -m freeact_tui.mcp.pytools_server`` serves ``list_categories`` and ``list_tools`` over
``$PYTOOLS_DIR`` (default ``.freeact/generated``); the agent itself answers them in-process
(``mcp.discovery``), this server is for SDK code that configures it as a JSON MCP server.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from freeact_tui.mcp.discovery import list_categories as _categories
from freeact_tui.mcp.discovery import list_tools as _tools


def main() -> None:
    from mcp.server.fastmcp import FastMCP

    root = Path(os.environ.get("PYTOOLS_DIR") or ".freeact/generated")
    server = FastMCP("pytools_mcp", log_level="ERROR")

    @server.tool(name="list_categories")
    def list_categories() -> dict[str, list[str]]:
        """List all tool categories in `gentools/` and `mcptools/` directories."""
        return _categories(root)

    @server.tool(name="list_tools")
    def list_tools(categories: str | list[str]) -> dict[str, Any]:
        """List all tools in one or more categories under `gentools/` and `mcptools/`."""
        return _tools(root, categories)

    server.run(transport="stdio")


if __name__ == "__main__":
    main()
