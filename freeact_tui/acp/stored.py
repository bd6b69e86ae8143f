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
from freeact_tui.reach import probe
from freeact_tui.store.index import TOOL_RESULTS_DIR
from freeact_tui.store.restored import stored_choice
from freeact_tui.store.sessions import SessionStore


def listed_sessions(load_config: Callable[[Path], Config], cwd: str | None) -> list[SessionInfo]:
    """The sessions of the store ``cwd``'s config names, newest first (only those started in ``cwd``). A session
    whose folder is not recorded is listed under no folder: it is left out (``SessionInfo`` needs a ``cwd``, and
    naming the asked folder or this process's would hand one folder's conversation to another)."""
    where = Path(cwd) if cwd else Path.cwd()
    config = load_config(where).model_copy(update={"working_dir": where})
    wanted = str(where.resolve()) if cwd else None
    return [
        SessionInfo(
            session_id=info.id,
            cwd=info.cwd,
            title=info.title or None,
            updated_at=info.updated.isoformat(),
        )
        for info in SessionStore(config.resolved_sessions_dir()).list()
        # a stored folder may be anything (a name too long, a loop): probed, never raising
        if info.cwd is not None and (wanted is None or str(probe.resolved(info.cwd)) == wanted)
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


def copy_history(source: Path, target: Path, upto: dict[str, int] | None = None) -> None:
    """The histories and saved tool results of a session, copied for a fork (not its meta or lock).

    ``upto``: the sizes of the histories at the source's last completed point (``store.open_turn``: where its
    open turn began): each is copied up to there and a history begun since is left out, so the fork
    never holds the open turn (its calls still unanswered). ``None``: the source is at rest, copied whole.
    """
    target.mkdir(parents=True, exist_ok=False)
    for entry in source.iterdir():
        if entry.suffix == ".jsonl" and entry.is_file() and not entry.is_symlink():
            _copy_history_file(entry, target / entry.name, None if upto is None else upto.get(entry.name, 0))
        elif entry.name == TOOL_RESULTS_DIR and entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, target / entry.name, symlinks=True)


def _copy_history_file(source: Path, target: Path, size: int | None) -> None:
    """``source`` copied whole (``size`` ``None``, or the file no longer holds its first ``size`` bytes: it
    was rewritten) or its first ``size`` bytes (nothing at 0: a history begun in the open turn)."""
    if size is None or source.stat().st_size < size:
        shutil.copy2(source, target)
    elif size > 0:
        with source.open("rb") as src, target.open("wb") as dst:
            dst.write(src.read(size))


__all__ = ["StoredSettings", "copy_history", "listed_sessions", "stored_settings"]
