"""A stdio MCP server for tests whose tools hang or kill the server; `ping` still answers."""

from __future__ import annotations

import asyncio
import os

from mcp.server.fastmcp import FastMCP

server = FastMCP("stuck", log_level="WARNING")


@server.tool()
async def wait_forever() -> str:
    """Never return."""
    await asyncio.Event().wait()
    return "unreachable"


@server.tool()
def ping() -> str:
    """Answer at once."""
    return "pong"


@server.tool()
def die() -> str:
    """Terminate the server process in the middle of the call."""
    os._exit(3)


if __name__ == "__main__":
    server.run("stdio")
