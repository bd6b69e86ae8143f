"""Skills: freeact's ``SKILL.md`` files, listed in the system prompt and read by the model on demand.

A skill is a directory with a ``SKILL.md`` whose front matter names it and says when to use it::

    ---
    name: output-parsers
    description: Parse the output of a tool into typed results.
    ---
    (instructions the model reads when the skill applies)

Skills are found in ``.freeact/skills/`` (freeact's workspace skills) and ``.agents/skills/``
(project skills) of the working dir and of the freeact project above it. Only names, descriptions
and paths go into the prompt; the model reads a skill's file when a task matches it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from freeact_tui import paths

SKILL_FILE = "SKILL.md"
SKILL_DIRS = (Path(paths.FREEACT_DIR_NAME) / "skills", Path(".agents") / "skills")
_MAX_DESCRIPTION = 300


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    path: Path


def front_matter(text: str) -> dict[str, str]:
    """The ``key: value`` pairs between the leading ``---`` lines (indented lines continue a value)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    values: dict[str, str] = {}
    key: str | None = None
    for line in lines[1:]:
        if line.strip() == "---":
            break
        if key is not None and line[:1] in (" ", "\t") and line.strip():
            values[key] = f"{values[key]} {line.strip()}".strip()
            continue
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            key = None
            continue
        key = name.strip()
        value = value.strip()
        if value in (">", "|", ">-", "|-"):
            value = ""
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        values[key] = value
    return values


def find_skills(working_dir: Path, extra_dirs: Sequence[Path] = ()) -> list[Skill]:
    """The skills of ``working_dir`` (and of its freeact project), then those in ``extra_dirs``
    (e.g. the app's bundled skills); the first found wins per name."""
    roots = [working_dir]
    project = paths.find_freeact_project(working_dir)
    if project is not None and project != working_dir:
        roots.append(project)
    return find_skills_in([root / skills_dir for root in roots for skills_dir in SKILL_DIRS] + list(extra_dirs))


def find_skills_in(directories: Sequence[Path]) -> list[Skill]:
    """The skills in ``directories`` (each holding ``NAME/SKILL.md``); the first found wins per name."""
    found: dict[str, Skill] = {}
    for directory in directories:
        if not directory.is_dir():
            continue
        for skill_file in sorted(directory.glob(f"*/{SKILL_FILE}")):
            try:
                meta = front_matter(skill_file.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                continue
            name = meta.get("name") or skill_file.parent.name
            description = " ".join(meta.get("description", "").split())[:_MAX_DESCRIPTION]
            found.setdefault(name, Skill(name, description, skill_file))
    return list(found.values())


def skills_section(skills: list[Skill], working_dir: Path) -> str:
    """The system prompt's list of skills (empty without any)."""
    if not skills:
        return ""
    lines = [
        "## Skills",
        "",
        "When a request matches a skill, read its file first and follow it.",
        "",
    ]
    for skill in skills:
        try:
            shown = skill.path.relative_to(working_dir)
        except ValueError:
            shown = skill.path
        lines.append(f"- **{skill.name}** (`{shown}`): {skill.description or 'no description'}")
    return "\n".join(lines)
