"""What the ACP agent reads of the session store beyond opening a session: the listing for
``session/list``, the settings (model, mode) stored with a session, and the copy a ``session/fork`` starts from."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from acp.schema import SessionInfo

from freeact_tui.acp.model_option import model_choices
from freeact_tui.project.config import Config
from freeact_tui.store.index import TOOL_RESULTS_DIR, read_meta
from freeact_tui.store.session import Session
from freeact_tui.store.sessions import SessionStore


def listed_sessions(load_config: Callable[[Path], Config], cwd: str | None) -> list[SessionInfo]:
    """The sessions of the store ``cwd``'s config names, newest first (only those started in ``cwd``)."""
    where = Path(cwd) if cwd else Path.cwd()
    config = load_config(where).model_copy(update={"working_dir": where})
    wanted = str(where.resolve()) if cwd else None
    return [
        SessionInfo(
            session_id=info.id,
            cwd=info.cwd or str(where),
            title=info.title or None,
            updated_at=info.updated.isoformat(),
        )
        for info in SessionStore(config.resolved_sessions_dir()).list()
        if wanted is None or info.cwd is None or str(Path(info.cwd).resolve()) == wanted
    ]


@dataclass(frozen=True)
class StoredSettings:
    """What an editor chose for a session and its meta keeps: the model (when still offered) and the mode."""

    model: str | None = None
    mode: str | None = None


def _stored(session: Session) -> tuple[str | None, str | None]:
    """The model and mode in a session's meta; one opened over ACP and not prompted yet has only its meta."""
    if session.exists():
        info = session.info()
        return info.model, info.approval_mode
    meta = read_meta(session.dir)
    return (meta.model, meta.approval_mode) if meta is not None else (None, None)


async def stored_settings(config: Config, session_id: str) -> StoredSettings:
    """The settings stored with a session (its meta); none for a session without one or an unreadable meta."""
    stored = SessionStore(config.resolved_sessions_dir()).session(session_id)
    if not stored.dir.is_dir():
        return StoredSettings()
    try:
        chosen, mode = await asyncio.to_thread(_stored, stored)
    except Exception:  # an unreadable meta: the config's settings
        return StoredSettings()
    if chosen and chosen != config.model:
        names = [c.name for c in await model_choices(config, None)]
        chosen = chosen if chosen in names else None
    else:
        chosen = None
    return StoredSettings(model=chosen, mode=mode)


def copy_history(source: Path, target: Path) -> None:
    """The histories and saved tool results of a session, copied for a fork (not its meta or lock)."""
    target.mkdir(parents=True, exist_ok=False)
    for entry in source.iterdir():
        if entry.suffix == ".jsonl" and entry.is_file() and not entry.is_symlink():
            shutil.copy2(entry, target / entry.name)
        elif entry.name == TOOL_RESULTS_DIR and entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, target / entry.name, symlinks=True)


__all__ = ["StoredSettings", "copy_history", "listed_sessions", "stored_settings"]
