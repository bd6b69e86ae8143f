"""The plan the agent keeps, as ACP ``plan`` updates.

The agent keeps a plan when it follows the task-planning skill: a Markdown checklist saved as
``<plans dir>/<task>.md`` (a freeact project's ``.freeact/plans``, else ``plans/`` in the data
directory), ticked step by step. When a call writes such a file (a file tool, code, or the editor
through ``fs/write_text_file``), its checklist is sent as a ``plan``: ticked steps ``completed``, the
first unticked one ``in_progress``, the rest ``pending``.

A plan is the session's that wrote it: the plans folder outside a project is shared by every session (and
process), so a file changed there is sent only to the session whose call names it (``PlanWatch.check``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from acp.helpers import plan_entry, update_plan
from acp.schema import AgentPlanUpdate, PlanEntry, PlanEntryStatus

from freeact_tui.project import files as projectfiles
from freeact_tui.project import paths

_STEP = re.compile(r"^\s*[-*+]\s+\[([ xX])\]\s+(\S.*?)\s*$")


def plan_entries(text: str) -> list[PlanEntry]:
    """The checklist of a plan file as plan entries (none when it has no checklist)."""
    steps = [(m.group(1) != " ", m.group(2)) for m in map(_STEP.match, text.splitlines()) if m]
    current = next((i for i, (done, _) in enumerate(steps) if not done), None)
    entries = []
    for i, (done, content) in enumerate(steps):
        status: PlanEntryStatus = "completed" if done else "in_progress" if i == current else "pending"
        entries.append(plan_entry(content, status=status))
    return entries


def names_file(text: str, path: Path) -> bool:
    """Whether ``text`` names the file ``path``: its name stands in it with no character that could go on
    a name (a letter, a digit, ``_``, ``.``, ``-``) on either side (``data.md`` does not name ``a.md``;
    ``plans/a.md``, ``'a.md'`` do)."""
    return re.search(rf"(?<![\w.-]){re.escape(path.name)}(?![\w.-])", text) is not None


def plans_dirs(working_dir: Path) -> list[Path]:
    """Where the task-planning skill saves plans for an agent in ``working_dir``."""
    dirs = [paths.data_dir() / "plans"]
    project = paths.find_freeact_project(working_dir)
    if project is not None:
        dirs.insert(0, project / paths.FREEACT_DIR_NAME / "plans")
    return [d.resolve() for d in dirs]


class PlanWatch:
    """Notices plan files written since it last looked; says what to send (at most one ``plan`` each time)."""

    def __init__(self, dirs: Sequence[Path]) -> None:
        self.dirs = list(dirs)
        self._seen = self._scan()
        self._sent: list[tuple[str, str]] | None = None

    def _scan(self) -> dict[Path, int]:
        found: dict[Path, int] = {}
        for directory in self.dirs:
            try:
                for path in directory.glob("*.md"):
                    found[path] = path.stat().st_mtime_ns
            except OSError:  # missing or unreadable: no plans there
                continue
        return found

    def covers(self, path: str) -> bool:
        return Path(path).parent in self.dirs and path.endswith(".md")

    def check(self, written: dict[str, str] | None = None, named: str = "") -> AgentPlanUpdate | None:
        """The update for the plan this session wrote last: among ``written`` (path → text, written through
        the client for this session), else among the files changed on disk since the last look that
        ``named`` (what this session's calls were given: their code, their arguments) names.

        The plans folder is shared (every session outside a project, every process, writes plans to it):
        a file changed there is this session's only when its own call names it, so that one session's plan
        never reaches another's client."""
        now = self._scan()
        changed = [p for p, mtime in now.items() if self._seen.get(p) != mtime and names_file(named, p)]
        self._seen = now
        for path, text in reversed(list((written or {}).items())):
            if self.covers(path):
                return self._update(text)
        if not changed:
            return None
        newest = max(changed, key=lambda p: now[p])
        try:
            text = projectfiles.read_text(newest, errors="replace")  # regular and bounded only
        except OSError:
            return None
        return self._update(text)

    def _update(self, text: str) -> AgentPlanUpdate | None:
        entries = plan_entries(text)
        key: list[tuple[str, str]] = [(e.content, e.status) for e in entries]
        if not entries or key == self._sent:
            return None
        self._sent = key
        return update_plan(entries)


__all__ = ["PlanWatch", "names_file", "plan_entries", "plans_dirs"]
