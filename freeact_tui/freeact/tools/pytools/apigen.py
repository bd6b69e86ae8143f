"""freeact 0.11's ``generate_mcp_sources``: Python APIs for ``ptc_servers``, as freeact writes them.

The same layout as freeact's (``<generated_dir>/mcptools/<server>/<tool>.py``, mcpygen's code), and
freeact's rule: a server whose package exists already is left as it is (it may have been edited).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from freeact_tui.freeact.tools.pytools import MCPTOOLS_DIR
from freeact_tui.mcp.ptc import generate_ptc_sources
from freeact_tui.project.config import McpServerConfig

# freeact spells the tool filter ``exclude_tools``.
_RENAMED = {"exclude_tools": "excluded_tools"}


async def generate_mcp_sources(config: dict[str, dict[str, Any]], generated_dir: Path) -> None:
    """Generate the Python API of each server in ``config`` that has none under ``generated_dir`` yet.

    Args:
        config: Server name → its parameters (``command``/``args``/``env`` or ``url``/``headers``).
        generated_dir: The directory that holds ``mcptools/`` (on the kernel's ``PYTHONPATH``).

    Raises:
        ValueError: A server's parameters are not a valid MCP server config.
        RuntimeError: A server could not be started or listed (the message names it).
    """
    if not config:
        return
    existing = generated_dir / MCPTOOLS_DIR
    servers: dict[str, McpServerConfig] = {}
    for name, params in config.items():
        if (existing / name).is_dir():
            continue
        values = {_RENAMED.get(k, k): v for k, v in params.items()}
        servers[name] = McpServerConfig.model_validate({**values, "mode": "ptc"})
    if not servers:
        return
    apis = await generate_ptc_sources(servers, Path(generated_dir), prune=False)
    if apis.errors:
        raise RuntimeError("; ".join(str(e) for e in apis.errors))
