"""The tool server's allow-list, socket and credentials: what a kernel needs of it before it starts.

The tool server itself (``tool_server``) imports mcpygen, mcp and uvicorn (seconds); this imports only
the standard library, so a kernel can be created while that import runs (``KernelExecutor.start``).
"""

from __future__ import annotations

import math
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from freeact_tui.execution.base import ApprovalKind, ExecApproval, ExecutorError

if TYPE_CHECKING:
    from mcpygen.tool_exec.approval.client import ApprovalRequest

# Seconds a programmatic tool call may run when the allow-list entry gives no ``timeout``.
DEFAULT_TOOL_TIMEOUT = 30.0


@dataclass(frozen=True)
class McpServerEntry:
    """One allowed MCP server: the only parameters it may be started with, and its call timeout."""

    params: dict[str, Any]
    timeout: float


def parse_mcp_servers(
    servers: Mapping[str, Mapping[str, Any]] | None, default_timeout: float = DEFAULT_TOOL_TIMEOUT
) -> dict[str, McpServerEntry]:
    """Validate an allow-list: server (package) name -> connection parameters.

    Args:
        servers: As in ``PtcApis.params`` (``command``/``args``/``env`` or ``url``/``headers``/
            ``type``), each optionally with a ``timeout`` key (seconds per tool call).
        default_timeout: The timeout of entries without one.

    Returns:
        The entries, their parameters without ``timeout``.

    Raises:
        ValueError: An entry is not a mapping, has neither ``command`` nor ``url``, or has a timeout
            that is not a positive number.
    """
    entries: dict[str, McpServerEntry] = {}
    for name, given in (servers or {}).items():
        if not isinstance(given, Mapping):
            raise ValueError(f"MCP server `{name}`: connection parameters must be a mapping, not {given!r}")
        params = {k: v for k, v in given.items() if k != "timeout"}
        if not isinstance(params.get("command"), str) and not isinstance(params.get("url"), str):
            raise ValueError(f"MCP server `{name}`: connection parameters need a `command` or a `url`")
        timeout = given.get("timeout", default_timeout)
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not math.isfinite(timeout)
            or timeout <= 0
        ):
            raise ValueError(
                f"MCP server `{name}`: timeout must be a positive number of seconds, not {timeout!r}"
            )
        entries[str(name)] = McpServerEntry(params, float(timeout))
    return entries


# The user name of the tool server's Basic credentials; the password is the random token.
TOKEN_USER = "freeact"  # noqa: S105 - a user name


def credentials_host(token: str, host: str) -> str:
    """``host`` with the tool server's credentials, for mcpygen's clients (``http://<it>:<port>/…``)."""
    return f"{TOKEN_USER}:{token}@{host}"


def bind_socket(host: str, port: int | None, what: str) -> socket.socket:
    """A TCP socket bound to ``host:port`` (port 0 or None: a free one).

    ``SO_REUSEADDR`` is set, so a fixed port can be bound again at once after a stop (its old
    connections in TIME_WAIT do not block it); a port another socket listens on is still refused.

    Raises:
        ExecutorError: The address is taken or not available.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port or 0))
    except OSError as e:
        sock.close()
        raise ExecutorError(f"Cannot listen on {host}:{port} for the {what}: {e.strerror or e}") from e
    return sock


def exec_approval(request: ApprovalRequest, approve_tool_calls: bool) -> ExecApproval | None:
    """What a request of the kernel's approval channel asks the user (``None``: nothing, a tool call
    when tool calls are not approved one by one)."""
    if request.server_name == "ipybox" and request.tool_name in ("shell", "shell_magic"):
        kind: ApprovalKind = "shell" if request.tool_name == "shell" else "script"
        return ExecApproval(kind, command=str(request.tool_args.get("cmd", "")))
    if not approve_tool_calls:
        return None
    args = dict(request.tool_args)
    return ExecApproval("mcp", server=request.server_name, tool=request.tool_name, args=args)
