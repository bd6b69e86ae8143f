"""The system prompt: ``prompts/system.md`` (shipped in the package) filled in for one agent."""

from __future__ import annotations

import logging
import re
from importlib import resources
from pathlib import Path
from typing import TypedDict, Unpack

from freeact_tui.project import refusals, trusted
from freeact_tui.project import skills as _skills
from freeact_tui.project.skills import available_skills, skills_section

log = logging.getLogger(__name__)

AGENTS_FILE = "AGENTS.md"
# Instructions beyond this size are cut so that a stray huge file cannot fill the context window.
MAX_PROJECT_INSTRUCTIONS_CHARS = 50_000
# Everything after this line of the template depends on the working directory.
_PER_RUN = "<!-- per-run -->"
_SECTION = re.compile(r"<!-- if:(\w+) -->\n?(.*?)<!-- end:\1 -->\n?", re.DOTALL)


def system_prompt_template() -> str:
    """The raw template text (placeholders and conditional sections unresolved)."""
    return resources.files("freeact_tui.agent").joinpath("prompts", "system.md").read_text(encoding="utf-8")


class PromptSettings(TypedDict, total=False):
    """What the system prompt is built from besides the working directory; each key may be left out.

    Attributes:
        extra: Further instructions (e.g. from the config), appended at the end.
        mcp_apis: Description of the generated MCP tool modules; the MCP section is left out without it.
        subagents: Whether to describe the ``subagent_task`` tool (default true; never in the ``text``
            protocol).
        gentools: The note on saved tools (``mcp.gentools.gentools_section``); left out without it.
        protocol: The action protocol: ``tools`` (the default: call the code tool), ``text`` (code blocks
            in the reply are the actions) or ``auto`` (tools, with code blocks as the fallback).
        project: Whether the working dir's skills and ``AGENTS.md`` apply (default true; not until it is
            trusted).
    """

    extra: str | None
    mcp_apis: str | None
    subagents: bool
    gentools: str | None
    protocol: str
    project: bool


def build_system_prompt(working_dir: Path, **settings: Unpack[PromptSettings]) -> str:
    """Build the system prompt for an agent working in ``working_dir``.

    Args:
        working_dir: The kernel's working directory; its ``AGENTS.md``, if any, is appended. All that
            depends on it comes last (``system_prompt_parts``).
        **settings: What else it is built from (``PromptSettings``).

    Returns:
        The prompt as Markdown.
    """
    common, local = system_prompt_parts(working_dir, **settings)
    return f"{common}\n\n{local}\n"


def system_prompt_parts(working_dir: Path, **settings: Unpack[PromptSettings]) -> tuple[str, str]:
    """The system prompt in two parts: what every run with these settings shares, then what this
    working directory adds (its path, skills, saved tools, ``AGENTS.md``, ``extra``).

    The shared part comes first so that a server's prompt cache (llama.cpp, vLLM, a provider's)
    reuses it across directories. Arguments as in ``build_system_prompt``.

    Raises:
        TypeError: a setting that ``PromptSettings`` does not name.
    """
    unknown = settings.keys() - PromptSettings.__annotations__.keys()
    if unknown:  # as a misspelt keyword argument would: a typo must not silently drop a setting
        raise TypeError(f"unknown system prompt settings: {', '.join(sorted(unknown))}")
    mcp_apis = settings.get("mcp_apis")
    protocol = settings.get("protocol", "tools")
    project = settings.get("project", True)
    gentools, extra = settings.get("gentools"), settings.get("extra")
    enabled = {
        "mcp_apis": bool(mcp_apis and mcp_apis.strip()),
        "subagents": settings.get("subagents", True) and protocol != "text",
        "tools": protocol != "text",
        "text": protocol == "text",
        "auto": protocol == "auto",
    }
    text = _SECTION.sub(
        lambda m: m.group(2) if enabled.get(m.group(1), False) else "", system_prompt_template()
    )
    shared, _, environment = text.partition(_PER_RUN)
    # Fill around the MCP listing so that inserted text is never scanned for placeholders.
    head, found, tail = shared.partition("{mcp_apis}")
    apis = (mcp_apis or "").strip() if found else ""
    common = (head + apis + tail).strip()
    sections = [environment.replace("{working_dir}", str(working_dir)).strip()]
    skills = skills_section(available_skills(working_dir, trusted=project), working_dir)
    if skills:
        sections.append(skills)
    if gentools:
        sections.append(gentools.strip())
    instructions = _project_instructions(working_dir) if project else None
    if instructions:
        sections.append(f"## Project instructions ({AGENTS_FILE})\n\n{instructions}")
    if extra and extra.strip():
        sections.append(f"## Additional instructions\n\n{extra.strip()}")
    return common, "\n\n".join(section for section in sections if section)


def bundled_skills_dir() -> Path:
    """The templates of the skills shipped with the app (see ``skills.bundled_skills_dir``)."""
    return _skills.bundled_skills_dir()


def _project_instructions(working_dir: Path) -> str | None:
    path = working_dir / AGENTS_FILE
    try:
        # Whatever stands there is read or refused (a FIFO, a directory: said, never skipped in silence).
        content = trusted.read_text(path, errors="replace").strip()
    except FileNotFoundError:
        return None
    except OSError as e:
        # An unreadable file must not keep the agent from starting; the user is told why it is not used.
        refusals.report(refusals.refusal_of("project instructions", path, e))
        return None
    if len(content) > MAX_PROJECT_INSTRUCTIONS_CHARS:
        content = content[:MAX_PROJECT_INSTRUCTIONS_CHARS] + f"\n\n[… {AGENTS_FILE} truncated …]"
    return content or None
