"""Housekeeping of a shadow checkpoint repository: pack loose objects once enough have piled up.

It runs beside checkpoints: the incremental pack takes no lock (it only adds a pack, then removes
loose objects that pack holds); the rare full repack and prune take the store's lock.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, suppress
from pathlib import Path

from freeact_tui.checkpoints.shadow_git import ShadowGit

HOUSEKEEPING = {
    "loose_objects": "1000",  # loose objects before they are packed (git's own gc.auto is 6700)
    "packs": "20",  # packs before they are merged into one
    "prune_expire": "2.weeks.ago",  # unreachable loose objects younger than this are kept (git's default)
}
"""Thresholds of ``CheckpointStore.gc``."""

_ONE_THREAD = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "pack.threads", "GIT_CONFIG_VALUE_0": "1"}


class Housekeeping:
    """Packs one shadow repository (``CheckpointStore.gc`` says when and how).

    Args:
        git: The shadow repository's git (its work tree is git's cwd, which ``prune-packed -n``
            lists paths relative to).
        locked: Enters the store's lock (and makes sure the repository exists).
    """

    def __init__(self, git: ShadowGit, locked: Callable[[], AbstractAsyncContextManager[None]]) -> None:
        self._git = git
        self.git_dir = git.git_dir
        self.root = git.work_tree
        self._locked = locked
        self._lock = asyncio.Lock()  # one incremental run at a time

    async def run(self, *, now: bool = False) -> bool:
        """One housekeeping run (see ``CheckpointStore.gc``); whether anything was packed."""
        limits = HOUSEKEEPING
        if now or self.pack_count() >= int(limits["packs"]):
            async with self._locked():
                if now:
                    await self._git.run("gc", "--quiet", "--prune=now")
                else:
                    expire = limits["prune_expire"]
                    await self._git.run("repack", "-A", "-d", "-l", "-q", f"--unpack-unreachable={expire}")
                    await self._git.run("prune", f"--expire={expire}")
                return True
        if not (self.git_dir / "HEAD").is_file():
            return False
        async with self._lock:
            if await asyncio.to_thread(self.loose_objects) < int(limits["loose_objects"]):
                return False
            # What `git repack -d -l` does, beside checkpoints and without the lock: a pack is
            # added, then the loose copies of what it holds are removed (readers fall back to it).
            await self._git.run(
                "pack-objects", "--all", "--reflog", "--indexed-objects", "--unpacked", "--incremental",
                "--local", "--non-empty", "--keep-true-parents", "--delta-base-offset", "-q",
                str(self.git_dir / "objects" / "pack" / "pack"),
                input=b"",
                env=_ONE_THREAD,  # in the background: leave the other cores to the action and the UI
            )  # fmt: skip
            # `git prune-packed` would also remove emptied object directories, in which a concurrent
            # checkpoint may be creating a file: list what it would remove, remove only the files.
            listed = await self._git.run("prune-packed", "-n")
            removal = asyncio.ensure_future(
                asyncio.to_thread(_remove_listed, listed, self.git_dir / "objects", self.root)
            )
            try:
                await asyncio.shield(removal)
            except asyncio.CancelledError:
                # A thread cannot be stopped: wait for it (short), so that nothing touches the
                # store once a cancelled run has returned (``fsck`` or a quit right after).
                await asyncio.gather(removal, return_exceptions=True)
                raise
            return True

    def pack_count(self) -> int:
        with suppress(OSError):
            return sum(1 for p in (self.git_dir / "objects" / "pack").iterdir() if p.suffix == ".pack")
        return 0

    def loose_objects(self) -> int:
        """The number of loose objects in the shadow repository (what ``gc`` packs)."""
        count = 0
        objects = self.git_dir / "objects"
        with suppress(OSError):
            for folder in objects.iterdir():
                if len(folder.name) == 2 and folder.is_dir():
                    count += sum(1 for _ in folder.iterdir())
        return count


def _remove_listed(listed: bytes, objects: Path, cwd: Path) -> None:
    """Remove the loose objects ``git prune-packed -n`` lists (``rm -f <path>`` lines, relative to
    git's ``cwd``); only files directly in ``objects/xx/``, never the directories."""
    for line in listed.decode("utf-8", "surrogateescape").splitlines():
        if not line.startswith("rm -f "):
            continue
        path = cwd / line[len("rm -f ") :]  # an absolute path stays as it is
        if path.parent.parent == objects and len(path.parent.name) == 2:
            with suppress(FileNotFoundError):
                os.unlink(path)
