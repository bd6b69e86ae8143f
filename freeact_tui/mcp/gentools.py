"""Saved tools (``gentools``): code that worked, kept as importable packages for later sessions.

A tool is ``<root>/gentools/<category>/<tool>/api.py`` with a ``run`` function (freeact's layout).
The root is on the kernel's ``PYTHONPATH``: a freeact project's ``.freeact/generated`` (shared with
freeact), elsewhere ``generated`` in the user data dir. The system prompt lists the saved tools by
the first line of ``run``'s docstring; the bundled skill ``saving-code-actions`` says how to add one.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from freeact_tui import paths

PACKAGE = "gentools"
LISTED_MAX = 50


@dataclass(frozen=True)
class SavedTool:
    category: str
    tool: str
    signature: str
    summary: str

    @property
    def module(self) -> str:
        return f"{PACKAGE}.{self.category}.{self.tool}"


def gentools_root(working_dir: Path) -> Path:
    """The directory on the kernel's path that holds the ``gentools`` package (created here)."""
    project = paths.find_freeact_project(working_dir)
    root = (
        project / paths.FREEACT_DIR_NAME / "generated"
        if project is not None
        else paths.data_dir() / "generated"
    )
    package = root / PACKAGE
    package.mkdir(parents=True, exist_ok=True)
    init = package / "__init__.py"
    if not init.exists():
        init.write_text('"""Tools saved from code actions (see the saving-code-actions skill)."""\n')
    return root


def saved_tools(root: Path) -> list[SavedTool]:
    """The saved tools under ``root/gentools`` (unreadable ones are skipped)."""
    tools: list[SavedTool] = []
    for api in sorted((root / PACKAGE).glob("*/*/api.py")):
        try:
            tree = ast.parse(api.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        run = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run"), None)
        if run is None:
            continue
        doc = (ast.get_docstring(run) or "").strip().splitlines()
        signature = f"run({ast.unparse(run.args)})"
        tools.append(SavedTool(api.parent.parent.name, api.parent.name, signature, doc[0] if doc else ""))
    return tools


def gentools_section(root: Path) -> str:
    """The system prompt's note on saved tools: where they go, and the ones that exist."""
    lines = [
        "## Saved tools",
        "",
        f"Code worth keeping can be saved as a tool in `{root / PACKAGE}` (skill `saving-code-actions`).",
    ]
    tools = saved_tools(root)
    if tools:
        lines += ["", "Saved so far (import the module and call `run`):"]
        lines += [f"- `{t.module}.{t.signature}`: {t.summary}" for t in tools[:LISTED_MAX]]
        if len(tools) > LISTED_MAX:
            lines.append(f"- … and {len(tools) - LISTED_MAX} more under `{root / PACKAGE}`.")
    return "\n".join(lines)
