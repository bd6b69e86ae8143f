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

The bundled skills (freeact's three: ``saving-codeacts``, ``task-planning``, ``output-parsers``)
are copied, as freeact does, into the freeact project's ``.freeact/skills`` or else into our data
dir, and read from there: nothing sent to the model names the installation's own files.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from freeact_tui.project import files as projectfiles
from freeact_tui.project import paths, refusals, trusted

log = logging.getLogger(__name__)

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
                meta = front_matter(trusted.read_text(skill_file, errors="replace"))
            except FileNotFoundError:
                continue
            except OSError as exc:  # unreadable, or not what the trust check read (``trusted``): said
                refusals.report(refusals.refusal_of("skill", skill_file, exc))
                continue
            name = meta.get("name") or skill_file.parent.name
            description = " ".join(meta.get("description", "").split())[:_MAX_DESCRIPTION]
            found.setdefault(name, Skill(name, description, skill_file))
    return list(found.values())


def bundled_skills_dir() -> Path:
    """The templates of the bundled skills (inside the installation: never shown to the model)."""
    return Path(__file__).resolve().parents[1] / "templates" / "skills"


def materialize_bundled_skills(
    *, skills_dir: Path, generated_rel_dir: Path, plans_rel_dir: Path, skip: Collection[str] = ()
) -> list[Path]:
    """Copy the bundled skills into ``skills_dir`` (freeact's ``materialize_bundled_skills``).

    A skill directory that exists already is left as it is, so the user's edits persist; so is a
    skill named in ``skip`` (one the project has under another directory name).
    ``{generated_rel_dir}`` and ``{plans_rel_dir}`` in the templates are filled in.

    Returns:
        The skill directories created now.
    """
    created: list[Path] = []
    for template in sorted(p for p in bundled_skills_dir().iterdir() if p.is_dir()):
        target = skills_dir / template.name
        if target.exists() or template.name in skip:
            continue
        for source in sorted(template.rglob("*")):
            destination = target / source.relative_to(template)
            if source.is_dir():
                destination.mkdir(parents=True, exist_ok=True)
                continue
            destination.parent.mkdir(parents=True, exist_ok=True)
            text = projectfiles.read_text(source)
            text = text.replace("{generated_rel_dir}", str(generated_rel_dir))
            destination.write_text(text.replace("{plans_rel_dir}", str(plans_rel_dir)), encoding="utf-8")
        created.append(target)
    return created


def skills_home(working_dir: Path, *, trusted: bool = True) -> Path:
    """Where the bundled skills are copied: our data dir, never the project (a copy in a trusted
    project's ``.freeact/skills`` would change what the user trusted). A freeact project's copy names
    its paths relative to the project, as freeact's does, so it is kept apart from the others'."""
    project = paths.find_freeact_project(working_dir) if trusted else None
    return paths.data_dir() / ("project-skills" if project is not None else "skills")


def available_skills(working_dir: Path, *, trusted: bool = True) -> list[Skill]:
    """The skills the agent in ``working_dir`` has: the project's, then the bundled ones (copied first).

    A copy that cannot be written leaves the bundled skills out, never the others.
    A folder not trusted has only the bundled skills (its own instruct the model: trust first).
    """
    project = paths.find_freeact_project(working_dir) if trusted else None
    home = skills_home(working_dir, trusted=trusted)
    if project is not None:  # as freeact's init fills them in: relative to the project
        generated, plans = Path(paths.FREEACT_DIR_NAME) / "generated", Path(paths.FREEACT_DIR_NAME) / "plans"
    else:
        generated, plans = paths.data_dir() / "generated", paths.data_dir() / "plans"
    try:
        materialize_bundled_skills(skills_dir=home, generated_rel_dir=generated, plans_rel_dir=plans)
    except OSError as exc:
        log.warning("cannot copy the bundled skills to %s: %s", home, exc)
    if project is not None:
        return find_skills(working_dir, [home])
    # Outside a project, output-parsers (for generated mcptools APIs) is listed only where there are some.
    has_apis = (paths.data_dir() / "generated" / "mcptools").is_dir()
    listed = find_skills(working_dir, [home]) if trusted else find_skills_in([home])
    return [s for s in listed if has_apis or s.path.parent != home / "output-parsers"]


def _shown_path(path: Path, working_dir: Path) -> str:
    """Relative to the working dir when under it, else ``~/…`` under home (the file tools expand it)."""
    if path.is_relative_to(working_dir):
        return str(path.relative_to(working_dir))
    home = Path.home()
    if path.is_relative_to(home):
        return f"~/{path.relative_to(home)}"
    return str(path)


def skill_prompt(name: str, args: str) -> str:
    """What freeact sends for ``/<name> args``: ``<skill name="name">args</skill>``."""
    return f'<skill name="{name}">{args.strip()}</skill>'


def skills_section(skills: list[Skill], working_dir: Path) -> str:
    """The system prompt's list of skills (empty without any)."""
    if not skills:
        return ""
    # One directory holds most skills as ``<dir>/<name>/SKILL.md``: it is named once, and only the
    # other skills' paths are shown (also a skill whose folder is not named as the skill is).
    # Ties go to the first skill's directory, so the prompt is the same in every process.
    def implied(skill: Skill) -> Path | None:
        return skill.path.parent.parent if skill.path.parent.name == skill.name else None

    parents = [implied(skill) for skill in skills]
    candidates = [p for p in dict.fromkeys(parents) if p is not None]
    common = max(candidates, key=parents.count) if candidates else skills[0].path.parent.parent
    where = _shown_path(common, working_dir)
    unless = " unless shown" if any(p != common for p in parents) else ""
    lines = [
        "## Skills",
        "",
        f"Read and follow a skill's file (`{where}/<name>/SKILL.md`{unless}) when a request matches "
        'it or says `<skill name="x">args</skill>`.',
        "",
    ]
    for skill in skills:
        shown = "" if implied(skill) == common else f" (`{_shown_path(skill.path, working_dir)}`)"
        lines.append(f"- **{skill.name}**{shown}: {skill.description or 'no description'}")
    return "\n".join(lines)
