"""Tool discovery as freeact 0.11's basic ``pytools`` server: ``pytools_list_categories`` and
``pytools_list_tools``, answered in-process from the generated root (``mcptools/`` and ``gentools/``).

freeact offers them by default (``[agent.tools] discovery = "basic"``) so that a model finds tools
the system prompt does not list; the answers have freeact's shape (``Categories`` and ``Tools``).
Paths are shown relative to the working directory when they are under it, as freeact shows them.
``hybrid`` (freeact's BM25 + embedding search) runs freeact's own server when its ``freeact[search]``
extra is importable here; otherwise basic discovery is used and the user is told once.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic_ai.tools import ToolDefinition

from freeact_tui.project.config import McpServerConfig
from freeact_tui.project.generated_layout import GENTOOLS, MCPTOOLS

DiscoveryMode = Literal["basic", "hybrid", "off"]

LIST_CATEGORIES = "pytools_list_categories"
LIST_TOOLS = "pytools_list_tools"
# The server name freeact gives its discovery server (its tools are ``pytools_<tool>``).
SERVER_NAME = "pytools"
_HYBRID_MODULES = ("freeact.tools.pytools.hybrid", "sqlite_vec", "watchfiles")

_DEFINITIONS = [
    ToolDefinition(
        name=LIST_CATEGORIES,
        description="List all tool categories in `gentools/` and `mcptools/` directories.",
        parameters_json_schema={"type": "object", "properties": {}},
    ),
    ToolDefinition(
        name=LIST_TOOLS,
        description="List all tools in one or more categories under `gentools/` and `mcptools/`.",
        parameters_json_schema={
            "type": "object",
            "properties": {
                "categories": {
                    "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
                    "description": "Category name or list of category names (e.g., 'github' or ['github', 'slack'])",
                }
            },
            "required": ["categories"],
        },
    ),
]


def list_categories(root: Path) -> dict[str, list[str]]:
    """The category directories of ``root/gentools`` and ``root/mcptools`` (freeact's ``Categories``)."""
    return {kind: _subdirs(root / kind) for kind in (GENTOOLS, MCPTOOLS)}


def list_tools(
    root: Path, categories: str | list[str], shown_from: Path | None = None
) -> dict[str, dict[str, list[str]]]:
    """The tool files of each category (freeact's ``dict[str, Tools]``).

    Args:
        root: The generated root.
        categories: One category name or several.
        shown_from: Paths under this directory are given relative to it.
    """
    names = [categories] if isinstance(categories, str) else list(categories)
    result: dict[str, dict[str, list[str]]] = {}
    for category in names:
        if not _plain_name(category):
            result[category] = {GENTOOLS: [], MCPTOOLS: []}  # never a path outside the root
            continue
        mcp_dir = root / MCPTOOLS / category
        gen_dir = root / GENTOOLS / category
        mcptools = (
            sorted(f for f in mcp_dir.glob("*.py") if not f.name.startswith("_")) if mcp_dir.is_dir() else []
        )
        gentools = (
            sorted(d / "api.py" for d in gen_dir.iterdir() if d.is_dir() and (d / "api.py").exists())
            if gen_dir.is_dir()
            else []
        )
        result[category] = {
            GENTOOLS: [_shown(p, shown_from) for p in gentools],
            MCPTOOLS: [_shown(p, shown_from) for p in mcptools],
        }
    return result


def hybrid_available() -> bool:
    """Whether freeact's hybrid discovery server and its ``freeact[search]`` extra import here."""
    try:
        return all(importlib.util.find_spec(name) is not None for name in _HYBRID_MODULES)
    except (ImportError, ValueError):
        return False


def hybrid_server(root: Path) -> McpServerConfig:
    """freeact's hybrid discovery server (JSON tools ``pytools_*``), run by this Python."""
    return McpServerConfig(
        command=sys.executable,
        args=["-m", "freeact.tools.pytools.hybrid"],
        env={"PYTOOLS_DIR": str(root), "PYTOOLS_DB_PATH": str(root.parent / "search.db")},
        mode="json",
    )


HYBRID_MISSING = (
    'discovery = "hybrid" needs freeact\'s search extra (pip install "freeact[search]" into the '
    "Python that runs freeact-tui); basic discovery (pytools_list_categories, pytools_list_tools) is used."
)


class ToolDiscovery:
    """The basic discovery tools over one generated root.

    Args:
        root: The generated root (``mcp.gentools.generated_root``).
        working_dir: Paths under it are shown relative to it.
    """

    def __init__(self, root: Path, working_dir: Path | None = None) -> None:
        self.root = root
        self.working_dir = working_dir

    def tool_definitions(self) -> list[ToolDefinition]:
        """The two tools, while there is something to find (a tool offered with nothing behind it
        sends a small model looking there instead of acting; #30 held-out json_port, shell_count)."""
        if not any(list_categories(self.root).values()):
            return []
        return list(_DEFINITIONS)

    def owns(self, name: str) -> bool:
        return name in (LIST_CATEGORIES, LIST_TOOLS)

    def call(self, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        """Answer a discovery call as JSON; never raises."""
        try:
            if name == LIST_CATEGORIES:
                return json.dumps(list_categories(self.root)), False
            categories = args.get("categories")
            if not isinstance(categories, (str, list)) or not all(isinstance(c, str) for c in categories):
                return "`categories` must be a category name or a list of names.", True
            return json.dumps(list_tools(self.root, categories, self.working_dir)), False
        except OSError as exc:
            return f"Cannot list the tools in {self.root}: {exc.strerror or exc}", True


def _subdirs(directory: Path) -> list[str]:
    if not directory.is_dir():
        return []
    return sorted(d.name for d in directory.iterdir() if d.is_dir() and not d.name.startswith(("_", ".")))


def _plain_name(name: str) -> bool:
    return bool(name) and "/" not in name and "\\" not in name and name not in (".", "..")


def _shown(path: Path, base: Path | None) -> str:
    if base is not None and path.is_relative_to(base):
        return str(path.relative_to(base))
    return str(path)
