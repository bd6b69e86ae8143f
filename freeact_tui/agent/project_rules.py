"""The permission rules an agent made from a config starts with: the user's rules file, and a freeact
project's ``.freeact/permissions.toml`` (for this process, never rewritten)."""

from __future__ import annotations

from pathlib import Path

from freeact_tui.freeact_project import read_freeact_permissions
from freeact_tui.paths import find_freeact_project, permissions_file
from freeact_tui.permissions import PermissionRules


def load_permissions(*, skip_permissions: bool, working_dir: Path) -> PermissionRules:
    """The user's rules, plus those of a freeact project in ``working_dir`` (or above)."""
    permissions = PermissionRules.load(permissions_file(), skip_permissions=skip_permissions, working_dir=working_dir)
    project = find_freeact_project(working_dir)
    if project is None:
        return permissions
    for effect, kind, pattern in read_freeact_permissions(project):
        try:
            permissions.add(kind, pattern, scope="session", effect=effect)  # type: ignore[arg-type]
        except ValueError:
            continue  # a pattern this app's rules cannot hold is left to freeact
    return permissions


__all__ = ["load_permissions"]
