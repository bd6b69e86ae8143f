"""A small MCP server for tests (stdio, or streamable HTTP with ``--http PORT``): arithmetic, echo, a
failing tool and one meant to be excluded."""

from __future__ import annotations

import sys

from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError

# Only warnings on stderr, not one log line per request.
server = FastMCP("calc", log_level="WARNING")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(text: str, times: int = 1) -> str:
    """Return `text` repeated `times` times, separated by spaces."""
    return " ".join([text] * times)


@server.tool()
def fail(message: str) -> str:
    """Always fail with `message`."""
    raise ToolError(message)


@server.tool(name="delete-everything")
def delete_everything() -> str:
    """A tool that configs exclude (its name also needs sanitizing)."""
    return "deleted"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.settings.port = int(sys.argv[2])
        server.settings.streamable_http_path = (
            "/rpc"  # no "/mcp" in it, so clients cannot guess the transport
        )
        server.run("streamable-http")
    else:
        server.run("stdio")
