"""SIGKILL of a process driving a multi-turn session with code actions, at random moments (×10).

Every session still lists, loads without damage and resumes; a killed process loses at most the
message in flight (every turn it reported complete is in its session). ``bench/kill.py`` runs the
same ×100 and prints tries / survived / lost.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from freeact_tui.agent.agent import Agent
from freeact_tui.agent.history import unanswered_calls
from freeact_tui.store.sessions import SessionStore

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Kill:
    session_id: str
    after: float  # seconds from spawn to SIGKILL
    completed: int  # turns the driver reported complete before it died


def prompts(messages: list[ModelMessage]) -> list[str]:
    return [
        str(p.content)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    ]


def kill_at_random(sessions: Path, work: Path, rng: random.Random, *, early: bool) -> Kill:
    """Start a driver; SIGKILL it at a random moment: while it starts (``early``), else within
    1.5 s after its first completed turn (turns take tens of ms: the kill lands mid-turn, mid-action,
    mid-write or between turns). Start-up time depends on load, so moments are relative to progress."""
    session_id = str(uuid.uuid4())
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.kill_driver", str(sessions), str(work), session_id, "1000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert process.stdout is not None
    start = time.monotonic()
    lines: list[str] = []
    if early:
        time.sleep(rng.uniform(0.3, 3.0))
    else:
        first = process.stdout.readline()  # blocks until the first turn completed
        lines.append(first)
        time.sleep(rng.uniform(0.0, 1.5))
    process.send_signal(signal.SIGKILL)
    out, _ = process.communicate(timeout=30)
    lines.extend(out.splitlines())
    completed = sum(1 for line in lines if line.startswith("turn "))
    return Kill(session_id, time.monotonic() - start, completed)


async def check_survivor(store: SessionStore, kill: Kill, tmp_path: Path) -> None:
    """The killed session loads whole (a torn last line at most) and takes a new turn."""
    history = store.session(kill.session_id).load() if store.session(kill.session_id).exists() else None
    if history is None:
        assert kill.completed == 0  # killed before its first message was written
        return
    assert history.damage is None, history.damage
    done = prompts(history.messages)
    assert len(done) >= kill.completed, (kill, done)  # every reported turn is stored

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield "resumed"

    agent = Agent(
        FunctionModel(stream_function=answer, model_name="resume"),
        session_id=kill.session_id,
        sessions_dir=store.root,
        working_dir=tmp_path,
        enable_subagents=False,
        eager_kernel=False,
    )
    await agent.start()
    try:
        assert unanswered_calls(agent.history) == []  # a call cut by the kill was answered on load
        answers = [getattr(e, "content", None) async for e in agent.stream("after the kill")]
        assert "resumed" in answers
    finally:
        await agent.stop()
    reloaded = store.session(kill.session_id).load()
    assert reloaded.damage is None and prompts(reloaded.messages)[-1] == "after the kill"


@pytest.mark.kernel
async def test_sigkill_at_random_moments_loses_at_most_the_message_in_flight(tmp_path: Path) -> None:
    rng = random.Random(20261123)
    sessions = tmp_path / "sessions"
    kills = [kill_at_random(sessions, tmp_path / f"w{i}", rng, early=i % 4 == 0) for i in range(10)]
    assert sum(k.completed > 0 for k in kills) >= 7, kills

    store = SessionStore(sessions)
    listed = {info.id for info in store.list()}
    assert {k.session_id for k in kills if store.session(k.session_id).exists()} <= listed
    for kill in kills:
        await check_survivor(store, kill, tmp_path)
