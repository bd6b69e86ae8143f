"""Checkpoint cost: one checkpoint per action on a 10,000-file tree where each action changed 10
files, the cost when nothing changed, the first (cold) checkpoint, and the shadow repository's
disk growth per 100 actions — without housekeeping, and with it on the app's schedule
(``Checkpointing``: ``CheckpointStore.gc`` in the background every 20 checkpoints): 300 actions on
two stores of the same tree, interleaved, one with housekeeping and one without.

Target: <= 50 ms median per action (wall time; the CPU time is printed too, since a busy machine
stretches the wall time). Run: ``python bench/checkpoints.py [--json]``.
"""

from __future__ import annotations

import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _report import run_bench  # noqa: E402  (bench/ is on the path when a script runs)

from freeact_tui.checkpoints.actions import ActionCheckpoints  # noqa: E402
from freeact_tui.checkpoints.checkpointing import HOUSEKEEP_EVERY, ActionLog, Checkpointing  # noqa: E402
from freeact_tui.checkpoints.engine import CheckpointStore  # noqa: E402
from freeact_tui.toolcalls import CodeAction  # noqa: E402

FILES = 10_000
DIRS = 100
CHANGED = 10
ACTIONS = 100
HOUSEKEPT_ACTIONS = 300


def make_tree(root: Path) -> list[Path]:
    """10,000 source-like files (~1 KiB each) in 100 nested directories, plus an ignored build dir."""
    files = []
    for d in range(DIRS):
        folder = root / f"pkg{d // 10}" / f"mod{d}"
        folder.mkdir(parents=True)
        for f in range(FILES // DIRS):
            path = folder / f"file{f}.py"
            path.write_text(f"# module {d}/{f}\n" + "def f(x):\n    return x * 2\n" * 30)
            files.append(path)
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    for i in range(500):
        (root / "build" / f"obj{i}.o").write_bytes(os.urandom(256))
    return files


def cpu_s() -> float:
    """CPU seconds used so far by this process and its finished children (git), in user and kernel mode."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def disk_usage(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def edit(files: list[Path], action: int) -> None:
    for k in range(CHANGED):  # a realistic action: 10 files edited somewhere in the tree
        path = files[(action * 997 + k * 1009) % len(files)]
        with path.open("a") as fh:
            fh.write(f"# edited by action {action}\n")


class Timed:
    """A store whose checkpoints (and packing runs) are timed, behind the app's ``Checkpointing``."""

    def __init__(self, root: Path, store_dir: Path, housekeep_every: int) -> None:
        self.store = CheckpointStore(root, store_dir=store_dir)
        self.cp = Checkpointing(
            ActionCheckpoints(self.store),
            ActionLog(store_dir / "log"),
            lambda: [],
            housekeep_every=housekeep_every,
        )
        self.checkpoint_ms: list[float] = []
        self.packing_ms: list[float] = []
        real_checkpoint, real_gc = self.store.checkpoint, self.store.gc

        async def checkpoint(label: str, meta: dict[str, object] | None = None) -> object:
            started = time.perf_counter()
            try:
                return await real_checkpoint(label, meta)
            finally:
                self.checkpoint_ms.append((time.perf_counter() - started) * 1000)

        async def gc(*, now: bool = False) -> bool:
            started = time.perf_counter()
            packed = await real_gc(now=now)
            if packed:
                self.packing_ms.append((time.perf_counter() - started) * 1000)
            return packed

        self.store.checkpoint = checkpoint  # type: ignore[method-assign,assignment]
        self.store.gc = gc  # type: ignore[method-assign]

    def figures(self, prefix: str) -> dict[str, float | int]:
        ms = sorted(self.checkpoint_ms)
        return {
            f"{prefix}_checkpoint_ms_median": round(statistics.median(ms), 1),
            f"{prefix}_checkpoint_ms_p95": round(ms[int(0.95 * len(ms)) - 1], 1),
            f"{prefix}_checkpoint_ms_max": round(ms[-1], 1),
        }


async def with_housekeeping(root: Path, files: list[Path], tmp: Path) -> dict[str, float | int]:
    """HOUSEKEPT_ACTIONS actions through the app's ``Checkpointing`` on two stores of the same tree,
    interleaved (the same load for both): one with housekeeping on its schedule, one without."""
    kept, plain = Timed(root, tmp / "store-kept", HOUSEKEEP_EVERY), Timed(root, tmp / "store-plain", 1 << 30)
    await kept.store.checkpoint("initial")
    await plain.store.checkpoint("initial")
    kept.checkpoint_ms.clear()
    plain.checkpoint_ms.clear()
    packs = kept.store.git_dir / "objects" / "pack"
    size_before, packs_before = disk_usage(kept.store.git_dir), disk_usage(packs)
    plain_before = disk_usage(plain.store.git_dir)
    sizes = []
    for action in range(HOUSEKEPT_ACTIONS):
        edit(files, 10_000 + action)
        for timed in (kept, plain) if action % 2 else (plain, kept):
            await timed.cp.before_action([CodeAction(f"action {action}")], f"c{action}")
        if (action + 1) % 100 == 0:
            sizes.append(round((disk_usage(kept.store.git_dir) - size_before) / 1024, 1))
    if kept.cp._housekeeping is not None:
        await kept.cp._housekeeping
    await kept.cp.close()
    per_100 = 100 / HOUSEKEPT_ACTIONS
    runs = kept.packing_ms
    return {
        "plain_disk_growth_per_100_actions_kib": round(
            (disk_usage(plain.store.git_dir) - plain_before) / 1024 * per_100, 1
        ),
        "housekept_store_growth_kib_after_100_200_300": sizes,  # type: ignore[dict-item]
        "housekept_disk_growth_per_100_actions_kib": round(sizes[-1] * per_100, 1),
        "housekept_pack_growth_per_100_actions_kib": round(
            (disk_usage(packs) - packs_before) / 1024 * per_100, 1
        ),
        "housekept_loose_objects_after": kept.store.loose_objects(),
        "housekeeping_runs_that_packed": len(runs),
        "housekeeping_ms_median": round(statistics.median(runs), 1) if runs else 0,
        "housekeeping_ms_max": round(max(runs), 1) if runs else 0,
        **plain.figures("plain"),
        **kept.figures("housekept"),
    }


async def main() -> dict[str, float | int]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "work"
        root.mkdir()
        files = make_tree(root)
        store = CheckpointStore(root, store_dir=Path(tmp) / "store")

        started = time.perf_counter()
        await store.checkpoint("initial")
        cold_ms = (time.perf_counter() - started) * 1000

        unchanged_ms = []
        for _ in range(10):
            started = time.perf_counter()
            assert await store.checkpoint("nothing changed") is None
            unchanged_ms.append((time.perf_counter() - started) * 1000)

        size_before = disk_usage(store.git_dir)
        per_action_ms = []
        per_action_cpu_ms = []
        for action in range(ACTIONS):
            edit(files, action)
            started, cpu = time.perf_counter(), cpu_s()
            made = await store.checkpoint(f"action {action}", {"action": action})
            per_action_ms.append((time.perf_counter() - started) * 1000)
            per_action_cpu_ms.append((cpu_s() - cpu) * 1000)
            assert made is not None
        growth = disk_usage(store.git_dir) - size_before

        started = time.perf_counter()
        await store.gc(now=True)
        gc_s = time.perf_counter() - started
        packed = disk_usage(store.git_dir)
        checkpoints = len(await store.list())
        housekept = await with_housekeeping(root, files, Path(tmp))

    return {
        "files": FILES,
        "changed_files_per_action": CHANGED,
        "checkpoint_ms_median": round(statistics.median(per_action_ms), 1),
        "checkpoint_ms_p95": round(sorted(per_action_ms)[int(0.95 * len(per_action_ms)) - 1], 1),
        "checkpoint_cpu_ms_median": round(statistics.median(per_action_cpu_ms), 1),
        "unchanged_checkpoint_ms_median": round(statistics.median(unchanged_ms), 1),
        "first_checkpoint_ms": round(cold_ms, 1),
        "disk_growth_per_100_actions_kib": round(growth / 1024 * 100 / ACTIONS, 1),
        "store_after_gc_kib": round(packed / 1024, 1),
        "gc_s": round(gc_s, 2),
        "checkpoints": checkpoints,
        **housekept,
        "load_average_1min": round(os.getloadavg()[0], 2),
    }


if __name__ == "__main__":
    run_bench(__doc__ or "", main)
