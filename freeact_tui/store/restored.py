"""What a stored session gives back when it is opened again, decided as data that is not the user's own.

A session's ``meta.json`` is a file like any other: a store inside a project folder is the project's
(a clone or a pull plants or edits it), and any ``meta.json`` may have been edited since the app wrote
it. So every setting restored from one comes through here, and none of it counts as the user's choice:

- the ``launch`` record (model, base URL, action protocol) becomes a config layer
  (``project.sources.StoredLayer``): for a store inside the project it is a project layer, passed by the
  one table of project settings (``policy.project_layer``, ``policy.limit_layers``: a base URL that
  would receive the user's key is dropped), never the command line;
- the approval mode is restored only when it is no looser than the mode the user's own config and flags
  give this run (``restored_mode``): a stored "auto" never switches approvals off.

The CLI's ``--resume``/``--session-id`` and the ACP agent's ``session/load``, resume and fork read a
session's settings only through ``launch_layer`` and ``stored_choice``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

from freeact_tui.effects.modes import ApprovalMode
from freeact_tui.project import paths
from freeact_tui.project.config import ActionProtocolSetting, Config
from freeact_tui.project.sources import StoredLayer
from freeact_tui.store.index import META_FILE, SessionMeta, read_meta
from freeact_tui.store.session import Session
from freeact_tui.store.sessions import SessionStore

ENDPOINT_KEYS = ("model", "base_url")
RESUMED_KEYS = (*ENDPOINT_KEYS, "action_protocol")
"""The config keys a resumed session takes from its record."""

AUTO_MODE = "auto"
"""The mode that approves every action no deny rule refuses (``--skip-permissions``; ACP's "auto")."""

# How much runs unasked in each approval mode, least first: a stored mode is restored only when it
# ranks no higher than the user's own. A mode not in the table is never restored.
MODE_LOOSENESS: dict[str, int] = {
    ApprovalMode.PLAN.value: 0,
    ApprovalMode.ASK.value: 1,
    ApprovalMode.IN_FOLDER.value: 2,
    ApprovalMode.SANDBOXED_AUTO.value: 3,
    AUTO_MODE: 4,
}

_PROTOCOLS = frozenset(get_args(ActionProtocolSetting))


def user_mode(config: Config) -> str:
    """The approval mode the user's own config and flags give this run (``skip_permissions`` is one a
    project may never set: ``policy.PROJECT_REFUSED``)."""
    return AUTO_MODE if config.skip_permissions else ApprovalMode.ASK.value


def restored_mode(stored: object, *, user: str) -> str | None:
    """The stored approval mode when it is no looser than ``user`` (the user's own), else ``None``."""
    if not isinstance(stored, str) or stored not in MODE_LOOSENESS:
        return None
    return stored if MODE_LOOSENESS[stored] <= MODE_LOOSENESS.get(user, 0) else None


def in_project(session_dir: Path, folder: Path) -> bool:
    """Whether a stored session is project data: its directory lies inside ``folder`` or the freeact
    project around it, and not in the user's own data dir."""
    where = session_dir.expanduser().resolve()
    if where.is_relative_to(paths.default_sessions_dir().expanduser().resolve()):
        return False
    folder = folder.expanduser().resolve()
    project = paths.find_freeact_project(folder)
    roots = [folder, *([project.resolve()] if project is not None else [])]
    return any(where.is_relative_to(root) for root in roots)


def resumed_values(recorded: Mapping[str, object], given: Mapping[str, object]) -> dict[str, str]:
    """The config keys to take from a session's ``launch`` record.

    The model and the base URL are one endpoint: when the command line names either, the record gives
    nothing (its protocol was chosen for the other endpoint). Otherwise each key the command line
    leaves open comes from the record.

    Args:
        recorded: The record (``SessionMeta.launch``; from a file: anything).
        given: The command line's config overrides (``None``: not given).
    """
    if any(given.get(key) is not None for key in ENDPOINT_KEYS):
        return {}
    taken: dict[str, str] = {}
    for key in RESUMED_KEYS:
        value = recorded.get(key)
        if given.get(key) is not None or not isinstance(value, str) or not value.strip():
            continue
        if key == "action_protocol" and value not in _PROTOCOLS:
            continue  # a damaged or foreign record: the config's choice stands
        taken[key] = value
    return taken


def launch_layer(config: Config, session_id: str, given: Mapping[str, object]) -> StoredLayer | None:
    """The settings a resumed session gives (its ``launch`` record) as a config layer for
    ``load_config(stored=…)``; ``None`` when it gives none."""
    session_dir = SessionStore(config.resolved_sessions_dir()).session(session_id).dir
    meta = read_meta(session_dir)
    values = resumed_values(dict(meta.launch) if meta is not None else {}, given)
    if not values:
        return None
    return StoredLayer(
        str(session_dir / META_FILE), values, in_project(session_dir, config.resolved_working_dir())
    )


@dataclass(frozen=True)
class StoredChoice:
    """What an editor chose for a session and its meta keeps, as far as it may be restored: the model
    (any; the caller offers only its own choices) and the approval mode (``restored_mode``)."""

    model: str | None = None
    mode: str | None = None


def _meta_of(session: Session) -> SessionMeta | None:
    """A session's meta (refreshed from its history when it has one; one opened over ACP and not
    prompted yet has only its meta)."""
    if session.exists():
        info = session.info()
        return SessionMeta(model=info.model, approval_mode=info.approval_mode)
    return read_meta(session.dir)


def stored_choice(config: Config, session_id: str) -> StoredChoice:
    """The model and approval mode stored with a session, as far as they may be restored (none for a
    session without a meta or an unreadable one)."""
    session = SessionStore(config.resolved_sessions_dir()).session(session_id)
    if not session.dir.is_dir():
        return StoredChoice()
    try:
        meta = _meta_of(session)
    except Exception:  # an unreadable meta: the config's settings
        return StoredChoice()
    if meta is None:
        return StoredChoice()
    mode = restored_mode(meta.approval_mode, user=user_mode(config))
    return StoredChoice(model=meta.model if isinstance(meta.model, str) else None, mode=mode)


__all__ = [
    "MODE_LOOSENESS",
    "RESUMED_KEYS",
    "StoredChoice",
    "in_project",
    "launch_layer",
    "restored_mode",
    "resumed_values",
    "stored_choice",
    "user_mode",
]
