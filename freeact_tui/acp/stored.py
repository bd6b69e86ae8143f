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
from freeact_tui.store.index import TOOL_RESULTS_DIR
from freeact_tui.store.restored import stored_choice
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
    """What an editor chose for a session and its meta keeps, as far as it may be restored: the model
    (when still offered) and the approval mode (never looser than the user's own: ``store.restored``)."""

    model: str | None = None
    mode: str | None = None


async def stored_settings(config: Config, session_id: str) -> StoredSettings:
    """The settings stored with a session (its meta) that may be restored (``store.restored.stored_choice``)."""
    stored = await asyncio.to_thread(stored_choice, config, session_id)
    chosen = stored.model
    if chosen and chosen != config.model:
        names = [c.name for c in await model_choices(config, None)]
        chosen = chosen if chosen in names else None
    else:
        chosen = None
    return StoredSettings(model=chosen, mode=stored.mode)


def copy_history(source: Path, target: Path) -> None:
    """The histories and saved tool results of a session, copied for a fork (not its meta or lock)."""
    target.mkdir(parents=True, exist_ok=False)
    for entry in source.iterdir():
        if entry.suffix == ".jsonl" and entry.is_file() and not entry.is_symlink():
            shutil.copy2(entry, target / entry.name)
        elif entry.name == TOOL_RESULTS_DIR and entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, target / entry.name, symlinks=True)


__all__ = ["StoredSettings", "copy_history", "listed_sessions", "stored_settings"]
