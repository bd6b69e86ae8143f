"""The agent's side of checkpoints: one call before each approved action that can write.

It never raises into the turn: when checkpoints cannot work (off in the config, remote mode, no
``git``, too many files) it says why once in ``disabled_reason`` and lets the action run.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from freeact_tui.checkpoints.engine import CheckpointStore
from freeact_tui.checkpoints.limits import CheckpointLimits
from freeact_tui.checkpoints.records import Checkpoint
from freeact_tui.checkpoints.shadow_git import CheckpointError, CheckpointsUnavailable
from freeact_tui.project.app_state import app_state_at, app_state_dirs
from freeact_tui.project.config import Config

log = logging.getLogger(__name__)


class ActionCheckpoints:
    """Checkpoints taken before actions, for a later undo.

    Args:
        store: The working directory's store, or None when checkpoints are off.
        disabled_reason: Why they are off (for the UI), when ``store`` is None.
    """

    def __init__(self, store: CheckpointStore | None, disabled_reason: str | None = None) -> None:
        self.store = store
        self.disabled_reason = disabled_reason if store is None else None
        self.last_error: str | None = None

    @classmethod
    def from_config(
        cls, config: Config, *, working_dir: Path | None = None, execution: str | None = None
    ) -> ActionCheckpoints:
        """The checkpoints the config asks for (``checkpoints``, the limits, the execution mode)."""
        return cls.create(
            enabled=config.checkpoints,
            execution=execution or config.execution,
            working_dir=working_dir or config.resolved_working_dir(),
            sessions_dir=config.resolved_sessions_dir(),
            limits=CheckpointLimits(
                max_file_bytes=config.checkpoint_max_file_bytes,
                max_binary_bytes=config.checkpoint_max_binary_bytes,
                max_files=config.checkpoint_max_files,
            ),
        )

    @classmethod
    def create(
        cls,
        *,
        enabled: bool,
        execution: str,
        working_dir: Path,
        sessions_dir: Path | None,
        limits: CheckpointLimits,
        store_dir: Path | None = None,
    ) -> ActionCheckpoints:
        """Checkpoints of ``working_dir`` (off when not ``enabled`` or in remote mode)."""
        if not enabled:
            return cls(None, "Checkpoints are off (checkpoints = false in the config).")
        if execution == "remote":
            return cls(None, "Checkpoints are off in remote mode: the kernel's files are on another machine.")
        root = working_dir.expanduser().resolve()
        if (own := app_state_at(str(root))) is not None:
            return cls(None, f"Checkpoints are off in a folder of {own.what}: undo never rewrites it.")
        exclude = []
        # never rewind the session history, nor any of the app's own state (its rules, trust) in the folder
        kept = [Path(d.path) for d in app_state_dirs()]
        for own_dir in (*kept, *([sessions_dir.expanduser().resolve()] if sessions_dir is not None else [])):
            if own_dir == root or root in own_dir.parents:
                exclude.append("/" + own_dir.relative_to(root).as_posix() + "/")
        try:
            return cls(CheckpointStore(root, store_dir=store_dir, limits=limits, exclude=exclude))
        except CheckpointsUnavailable as exc:
            return cls(None, str(exc))

    @property
    def enabled(self) -> bool:
        return self.store is not None

    @property
    def root(self) -> Path | None:
        """The directory covered (writes elsewhere cannot be undone), or None when off."""
        return None if self.store is None else self.store.root

    async def before_action(self, label: str, meta: Mapping[str, Any] | None = None) -> Checkpoint | None:
        """Checkpoint the working directory before an approved action that can write.

        Returns:
            The checkpoint that holds the state before the action (the newest one when nothing
            changed since), or None when checkpoints are off or this one failed (``last_error``).
        """
        if self.store is None:
            return None
        try:
            made = await self.store.checkpoint(label, meta)
            self.last_error = None
            return made if made is not None else await self.store.latest()
        except CheckpointsUnavailable as exc:
            self.store, self.disabled_reason = None, str(exc)
            log.warning("%s", exc)
        except CheckpointError as exc:
            self.last_error = str(exc)
            log.warning("checkpoint failed: %s", exc)
        return None
