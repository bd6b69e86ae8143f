"""Housekeeping of the checkpoint store: ``git gc --auto`` with bounded thresholds, run in the
background every few checkpoints and after undo/rewind, off the event loop, never detached, and
leaving every checkpoint restorable."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart

from freeact_tui.checkpoints import housekeeping
from freeact_tui.checkpoints.actions import ActionCheckpoints
from freeact_tui.checkpoints.checkpointing import ActionLog, Checkpointing
from freeact_tui.checkpoints.engine import CheckpointStore
from freeact_tui.toolcalls import CodeAction

pytestmark = pytest.mark.asyncio


@pytest.fixture
def work(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    for d in range(20):
        folder = root / f"pkg{d % 4}" / f"mod{d}"
        folder.mkdir(parents=True)
        for f in range(10):
            (folder / f"f{f}.py").write_text(f"# {d}/{f}\n" + "x = 1\n" * 40)
    return root


@pytest.fixture
def low_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pack past 100 loose objects instead of 1,000, so that a test needs few actions."""
    monkeypatch.setitem(housekeeping.HOUSEKEEPING, "loose_objects", "100")


def edit(work: Path, action: int) -> None:
    files = sorted(work.rglob("*.py"))
    for k in range(5):
        with files[(action * 37 + k * 11) % len(files)].open("a") as fh:
            fh.write(f"# action {action}\n")


def snapshot(work: Path) -> dict[str, bytes]:
    return {p.relative_to(work).as_posix(): p.read_bytes() for p in sorted(work.rglob("*")) if p.is_file()}


def fsck(store: CheckpointStore) -> None:
    subprocess.run(
        ["git", f"--git-dir={store.git_dir}", "fsck", "--no-dangling", "--strict"],
        check=True,
        capture_output=True,
    )


def disk(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


async def test_gc_auto_packs_past_its_threshold_and_every_checkpoint_stays_restorable(
    work: Path, low_threshold: None
) -> None:
    store = CheckpointStore(work)
    original = snapshot(work)
    first = await store.checkpoint("initial")
    assert first is not None
    assert store.loose_objects() > 200 and await store.gc() is True  # the 200 files of the first one
    assert store.loose_objects() == 0 and await store.gc() is False  # below the threshold: no git process
    states = []
    for action in range(12):
        edit(work, action)
        states.append(snapshot(work))
        assert await store.checkpoint(f"action {action}") is not None
    loose, size = store.loose_objects(), disk(store.git_dir)
    assert loose > 100
    assert await store.gc() is True
    assert store.loose_objects() < 20 and disk(store.git_dir) < size
    fsck(store)
    checkpoints = await store.list()
    assert len(checkpoints) == 13
    await store.restore(checkpoints[6])  # after action 5
    assert snapshot(work) == states[5]
    await store.restore(first)
    assert snapshot(work) == original
    assert await store.gc() is False  # below the threshold again: git does nothing


async def test_housekeeping_runs_in_the_background_every_n_checkpoints_without_blocking_the_loop(
    work: Path, tmp_path: Path, low_threshold: None
) -> None:
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("go")])]
    store = CheckpointStore(work)
    cp = Checkpointing(
        ActionCheckpoints(store), ActionLog(tmp_path / "log"), lambda: history, housekeep_every=12
    )
    for action in range(11):
        edit(work, action)
        await cp.before_action([CodeAction(f"edit {action}")], f"c{action}")
    assert cp._housekeeping is None and store.loose_objects() > 100

    gaps: list[float] = []
    running = True

    async def ticker() -> None:  # the event loop (the UI's) keeps turning while git packs
        loop = asyncio.get_running_loop()
        last = loop.time()
        while running:
            await asyncio.sleep(0.005)
            now = loop.time()
            gaps.append(now - last)
            last = now

    tick = asyncio.create_task(ticker())
    edit(work, 11)
    await cp.before_action([CodeAction("edit 11")], "c11")  # the 12th: housekeeping starts
    task = cp._housekeeping
    assert task is not None and not task.done()  # in the background: the action was not held up
    edit(work, 12)
    await cp.before_action([CodeAction("edit 12")], "c12")  # it and git take turns on the store
    await task
    running = False
    await tick
    assert store.loose_objects() < 40
    assert max(gaps) < 0.25  # no stall of the loop (git runs as a subprocess)
    fsck(store)
    assert len(await store.list()) == 13  # one per action
    plan = await cp.plan_undo("action")
    assert [r.corr_id for r in plan.records] == ["c12"]
    await cp.undo(plan)  # an undo schedules a (cheap) housekeeping run too
    assert cp._housekeeping is not None
    await cp.close()
    assert cp._housekeeping is None


async def test_a_housekeeping_run_cancelled_at_quit_leaves_a_sound_store(
    work: Path, tmp_path: Path, low_threshold: None
) -> None:
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("go")])]
    store = CheckpointStore(work)
    cp = Checkpointing(ActionCheckpoints(store), ActionLog(tmp_path / "log"), lambda: history)
    for action in range(12):
        edit(work, action)
        await store.checkpoint(f"action {action}")
    for delay in (0.0, 0.01, 0.05):
        cp.housekeep_soon()
        await asyncio.sleep(delay)
        await cp.close()  # what Agent.stop does
        fsck(store)
    assert await store.gc() in (True, False)  # a later run finishes the job
    assert store.loose_objects() < 20
    edit(work, 99)
    assert await store.checkpoint("after") is not None
    fsck(store)


async def test_a_cancelled_run_returns_only_after_its_removal_of_packed_objects_ended(
    work: Path, low_threshold: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loose objects a new pack holds are removed in a thread, which a cancellation cannot stop:
    the cancelled run waits for it, so nothing touches the store once ``close`` returned (CI once
    saw ``git fsck`` right after ``close`` fail on an object removed under it)."""
    import threading
    import time

    original = housekeeping._remove_listed
    started, ended = threading.Event(), threading.Event()

    def slow_removal(*args: object) -> None:
        started.set()
        time.sleep(0.5)
        original(*args)  # type: ignore[arg-type]
        ended.set()

    monkeypatch.setattr(housekeeping, "_remove_listed", slow_removal)
    store = CheckpointStore(work)
    for action in range(12):
        edit(work, action)
        await store.checkpoint(f"action {action}")
    run = asyncio.ensure_future(store.gc())
    assert await asyncio.to_thread(started.wait, 60)
    run.cancel()
    await asyncio.gather(run, return_exceptions=True)
    assert run.cancelled() and ended.is_set()
    fsck(store)


async def test_packs_are_merged_past_the_limit_and_checkpoints_beside_packing_stay_sound(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checkpoints taken while git packs (no lock between them) and a merge of the packs: every
    checkpoint restores its exact state afterwards."""
    monkeypatch.setitem(housekeeping.HOUSEKEEPING, "loose_objects", "20")
    monkeypatch.setitem(housekeeping.HOUSEKEEPING, "packs", "6")
    store = CheckpointStore(work)
    await store.checkpoint("initial")
    states: list[dict[str, bytes]] = []
    packed, counts = 0, []
    for action in range(16):
        edit(work, action)
        states.append(snapshot(work))
        made, did_pack = await asyncio.gather(store.checkpoint(f"action {action}"), store.gc())
        assert made is not None
        packed += did_pack
        counts.append(store._pack_count())
    peak = counts.index(max(counts))
    assert packed >= 6 and max(counts) == 6 and min(counts[peak:]) <= 2  # merged once at 6 packs
    fsck(store)
    checkpoints = list(reversed(await store.list()))[1:]
    assert len(checkpoints) == 16
    for checkpoint, state in list(zip(checkpoints, states, strict=True))[::3]:
        await store.restore(checkpoint)
        assert snapshot(work) == state
