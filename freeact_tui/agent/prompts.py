"""The system prompt: ``prompts/system.md`` (shipped in the package) filled in for one agent."""

from __future__ import annotations

import logging
import re
from importlib import resources
from pathlib import Path

from freeact_tui import skills as _skills
from freeact_tui.skills import available_skills, skills_section

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


def build_system_prompt(
    working_dir: Path,
    *,
    extra: str | None = None,
    mcp_apis: str | None = None,
    subagents: bool = True,
    gentools: str | None = None,
    protocol: str = "tools",
    project: bool = True,
) -> str:
    """Build the system prompt for an agent working in ``working_dir``.

    Args:
        working_dir: The kernel's working directory; its ``AGENTS.md``, if any, is appended. All that
            depends on it comes last (``system_prompt_parts``).
        extra: Further instructions (e.g. from the config), appended at the end.
        mcp_apis: Description of the generated MCP tool modules; the MCP section is left out without it.
        subagents: Whether to describe the ``subagent_task`` tool.
        gentools: The note on saved tools (``mcp.gentools.gentools_section``); left out without it.
        subagents: Whether to describe the ``subagent_task`` tool (never in the ``text`` protocol).
        protocol: The action protocol: ``tools`` (call the code tool), ``text`` (code blocks in the
            reply are the actions) or ``auto`` (tools, with code blocks as the fallback).
        project: Whether the working dir's skills and ``AGENTS.md`` apply (not until it is trusted).

    Returns:
        The prompt as Markdown.
    """
    common, local = system_prompt_parts(
        working_dir,
        extra=extra,
        mcp_apis=mcp_apis,
        subagents=subagents,
        gentools=gentools,
        protocol=protocol,
        project=project,
    )
    return f"{common}\n\n{local}\n"


def system_prompt_parts(
    working_dir: Path,
    *,
    extra: str | None = None,
    mcp_apis: str | None = None,
    subagents: bool = True,
    gentools: str | None = None,
    protocol: str = "tools",
    project: bool = True,
) -> tuple[str, str]:
    """The system prompt in two parts: what every run with these settings shares, then what this
    working directory adds (its path, skills, saved tools, ``AGENTS.md``, ``extra``).

    The shared part comes first so that a server's prompt cache (llama.cpp, vLLM, a provider's)
    reuses it across directories. Arguments as in ``build_system_prompt``.
    """
    enabled = {
        "mcp_apis": bool(mcp_apis and mcp_apis.strip()),
        "subagents": subagents and protocol != "text",
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
        if not path.is_file():
            return None
        content = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError as e:
        # An unreadable file must not keep the agent from starting; the log says why it is missing.
        log.warning("cannot read %s: %s", path, e)
        return None
    if len(content) > MAX_PROJECT_INSTRUCTIONS_CHARS:
        content = content[:MAX_PROJECT_INSTRUCTIONS_CHARS] + f"\n\n[… {AGENTS_FILE} truncated …]"
    return content or None
