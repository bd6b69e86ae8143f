"""The one hand-over of every client message to the SDK's router, with the checks the SDK's schema lacks.

Two classes of fault the SDK leaves open are closed here, for every method at once:

- A notification has no answer, so whatever fails in it (its params do not validate, its method is
  unknown, its handler raises) is logged as ONE line and the connection goes on; the SDK would log a
  traceback for each.
- The SDK's schema drops the list items it cannot read (``skip_invalid_items``): a malformed entry of
  ``mcpServers`` would vanish and the session open without it. Here the raw entries of every method that
  takes them (``MCP_METHODS``) are checked strictly first; one that does not validate refuses the request
  with -32602 naming the entry, and the session is not opened.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from acp.schema import AcpMcpServer, HttpMcpServer, McpServerStdio, SseMcpServer
from pydantic import TypeAdapter, ValidationError

from freeact_tui.acp.errors import invalid_params

logger = logging.getLogger(__name__)

Handler = Callable[[str, Any, bool], Awaitable[Any]]
"""The SDK's message handler: ``(method, params, is_notification) -> result``."""

MCP_METHODS = frozenset({"session/new", "session/load", "session/resume", "session/fork"})
"""The methods whose params carry ``mcpServers``."""

_SERVER: TypeAdapter[Any] = TypeAdapter(HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio)
_LISTS = ("args", "env", "headers")
"""The lists inside an entry, whose unreadable items the schema would drop too."""


def one_line(exc: BaseException) -> str:
    """``exc`` in one line: a validation error as its first fault, anything else as its text."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "params"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        return f"{where}: {first['msg']}{more}"
    return " ".join(str(exc).split())[:300] or type(exc).__name__


def _entry_fault(entry: Any) -> str | None:
    """Why ``entry`` is not an MCP server the schema reads whole, or ``None``."""
    try:
        server = _SERVER.validate_python(entry)
    except ValidationError as exc:
        return one_line(exc)
    for key in _LISTS:
        raw = entry.get(key) if isinstance(entry, dict) else None
        if isinstance(raw, list) and len(getattr(server, key, None) or []) != len(raw):
            return f"{key}: an item is not valid"
    return None


def check_mcp_servers(params: Any) -> None:
    """Refuse (-32602) ``params`` whose ``mcpServers`` is not a list of valid MCP server entries.

    Raises:
        RequestError: -32602, naming the first entry that is not valid (its index and name).
    """
    servers = params.get("mcpServers") if isinstance(params, dict) else None
    if servers is None:
        return  # a missing list is the schema's own -32602
    if not isinstance(servers, list):
        raise invalid_params("mcpServers must be a list of MCP servers")
    for index, entry in enumerate(servers):
        fault = _entry_fault(entry)
        if fault is not None:
            name = entry.get("name") if isinstance(entry, dict) else None
            named = f" ({name!r})" if isinstance(name, str) else ""
            raise invalid_params(f"mcpServers[{index}]{named} is not a valid MCP server: {fault}")


def guarded(handler: Handler) -> Handler:
    """``handler`` with the checks above: requests' ``mcpServers`` strictly, notifications' faults in one line."""

    async def handle(method: str, params: Any, is_notification: bool) -> Any:
        if not is_notification:
            if method in MCP_METHODS:
                check_mcp_servers(params)
            return await handler(method, params, is_notification)
        try:
            return await handler(method, params, is_notification)
        except Exception as exc:  # a notification has no answer: one line, and the connection goes on
            logger.warning("notification %s ignored: %s", method, one_line(exc))
            return None

    return handle


__all__ = ["MCP_METHODS", "Handler", "check_mcp_servers", "guarded", "one_line"]
