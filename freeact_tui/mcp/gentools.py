"""Saved tools (``gentools``): code that worked, kept as importable packages for later sessions.

A tool is ``<root>/gentools/<category>/<tool>/api.py`` with a ``run`` function (freeact's layout).
The root is what the kernel imports them from (through the app's checking finder, ``execution.kernel.code_finder``;
never on a ``PYTHONPATH``): a freeact project's ``.freeact/generated`` (shared with
freeact), elsewhere ``generated`` in the user data dir. The system prompt lists the saved tools by
the first line of ``run``'s docstring; the bundled skill ``saving-codeacts`` says how to add one.
"""

from __future__ import annotations

import ast
import keyword
import logging
from dataclasses import dataclass
from pathlib import Path

from freeact_tui.project import paths, refusals, trusted
from freeact_tui.project.generated_layout import GENTOOLS

log = logging.getLogger(__name__)

PACKAGE = GENTOOLS
LISTED_MAX = 50


@dataclass(frozen=True)
class SavedTool:
    category: str
    tool: str
    signature: str
    summary: str

    @property
    def module(self) -> str:
        # ``api`` holds ``run`` in both layouts (freeact's tool ``__init__.py`` is empty).
        return f"{PACKAGE}.{self.category}.{self.tool}.api"


def generated_root(working_dir: Path, *, trusted: bool = True) -> Path:
    """The one directory on the kernel's path for ``mcptools`` and ``gentools``.

    In a trusted freeact project it is the project's ``.freeact/generated`` (where freeact keeps both, so
    the two apps share them and nothing of ours shadows them); elsewhere, and in a folder not trusted
    (its modules would run in the kernel), ``generated`` in our data dir.
    """
    project = paths.find_freeact_project(working_dir) if trusted else None
    if project is not None:
        return project / paths.FREEACT_DIR_NAME / "generated"
    return paths.data_dir() / "generated"


def gentools_root(working_dir: Path, *, trusted: bool = True) -> Path:
    """The directory on the kernel's path that holds the ``gentools`` package (created here, unless it
    is a project's)."""
    root = generated_root(working_dir, trusted=trusted)
    if root != paths.data_dir() / "generated":
        return root  # a project's: the app writes nothing into it (``gentools`` imports as a namespace)
    package = root / PACKAGE
    package.mkdir(parents=True, exist_ok=True)
    init = package / "__init__.py"
    if not init.exists():
        init.write_text('"""Tools saved from code actions (see the saving-codeacts skill)."""\n')
    return root


def saved_tools(root: Path) -> list[SavedTool]:
    """The saved tools under ``root/gentools`` that can be imported (others are skipped)."""
    tools: list[SavedTool] = []
    for api in sorted((root / PACKAGE).glob("*/*/api.py")):
        if not (_importable_name(api.parent.name) and _importable_name(api.parent.parent.name)):
            continue  # e.g. `my-tools`: no import statement can name it
        try:
            tree = ast.parse(trusted.read_text(api))  # a project's: only as the trust check read it
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError) as exc:  # not what the trust check read, too big, ...: said
            refusals.report(refusals.refusal_of("saved tool", api, exc))
            continue
        except SyntaxError:
            continue
        run = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run"), None)
        if run is None:
            continue
        doc = (ast.get_docstring(run) or "").strip().splitlines()
        signature = f"run({ast.unparse(run.args)})"
        tools.append(SavedTool(api.parent.parent.name, api.parent.name, signature, doc[0] if doc else ""))
    return tools


def _importable_name(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


def gentools_section(root: Path, working_dir: Path | None = None) -> str:
    """The system prompt's note on saved tools: where they go, and the ones that exist.

    Args:
        root: The generated root (``gentools_root``).
        working_dir: Paths under it are shown relative to it.
    """
    where = root / PACKAGE
    if working_dir is not None and where.is_relative_to(working_dir):
        where = where.relative_to(working_dir)
    lines = [
        "## Saved tools",
        "",
        f"Code worth keeping can be saved as a tool in `{where}` (skill `saving-codeacts`).",
    ]
    tools = saved_tools(root)
    if tools:
        lines += ["", "Saved so far (import the module and call `run`):"]
        lines += [f"- `{t.module}.{t.signature}`: {t.summary}" for t in tools[:LISTED_MAX]]
        if len(tools) > LISTED_MAX:
            lines.append(f"- … and {len(tools) - LISTED_MAX} more under `{where}`.")
    return "\n".join(lines)
