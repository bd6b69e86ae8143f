"""What the ACP agent reads of the session store beyond opening a session: the listing for
``session/list``, the model stored with a session, and the copy a ``session/fork`` starts from."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from pathlib import Path

from acp.schema import SessionInfo

from freeact_tui.acp.model_option import model_choices
from freeact_tui.config import Config
from freeact_tui.store.index import TOOL_RESULTS_DIR
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


async def stored_model(config: Config, session_id: str) -> str | None:
    """The model stored with a session (its meta), when it is one of the models offered now."""
    stored = SessionStore(config.resolved_sessions_dir()).session(session_id)
    if not stored.dir.is_dir():
        return None
    try:
        chosen = (await asyncio.to_thread(stored.info)).model
    except Exception:  # an unreadable meta: the config's model
        return None
    if not chosen or chosen == config.model:
        return None
    names = [c.name for c in await model_choices(config, None)]
    return chosen if chosen in names else None


def copy_history(source: Path, target: Path) -> None:
    """The histories and saved tool results of a session, copied for a fork (not its meta or lock)."""
    target.mkdir(parents=True, exist_ok=False)
    for entry in source.iterdir():
        if entry.suffix == ".jsonl" and entry.is_file() and not entry.is_symlink():
            shutil.copy2(entry, target / entry.name)
        elif entry.name == TOOL_RESULTS_DIR and entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, target / entry.name, symlinks=True)


__all__ = ["copy_history", "listed_sessions", "stored_model"]
