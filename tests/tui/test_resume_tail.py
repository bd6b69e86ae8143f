"""A resumed session draws its last turn before its whole history is read (issue #43), and nothing else
changes: the model's next request is the one the SDK sends for the same session, and a damaged line
anywhere gives the same message and the same log as before.

The real app under Pilot on the module's kernel; the model is a ``FunctionModel`` that records what it
is sent. ``bench/long_session.py`` times the opening; here the order is asserted.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from freeact_tui.agent.agent import Agent
from freeact_tui.store.history import read_history
from freeact_tui.store.sessions import SessionStore
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.widgets.blocks import ResponseBlock
from tests import helpers
from tests.helpers import dumped, idle, log_rows, main, make_agent, ready, send, until
from tests.session_turns import damage, turn

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]

executor = helpers.kernel
make_app = helpers.chat_app
SIZE = (100, 30)
KINDS = ("text", "code", "thought", "error", "two-calls", "code")
TURNS = 120


def stored(sessions: Path, turns: int = TURNS) -> tuple[str, Path]:
    """A session of ``turns`` turns of every kind; its id and its history file."""
    session = SessionStore(sessions, fsync=False).new_session()
    messages: list[ModelMessage] = []
    for i in range(turns):
        messages += turn(i, KINDS[i % len(KINDS)])
    session.append(messages)
    session.flush_meta()
    return session.id, session.history_path()


def recording(sent: list[list[ModelMessage]]) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        sent.append(list(messages))
        yield "ok"

    return FunctionModel(stream_function=stream, model_name="recording")


def answers(app: FreeactApp) -> list[str]:
    return [str(b.text) for b in main(app).conversation.query(ResponseBlock)]


async def test_the_last_turn_is_on_the_screen_before_the_agent_loads_the_history(
    make_app: Callable[..., FreeactApp], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_id, _ = stored(tmp_path / "sessions")
    seen_at_start: list[list[str]] = []
    start = Agent.start

    async def spied(agent: Agent) -> None:  # what the log shows when the agent begins to load
        if agent.agent_id == "main":
            seen_at_start.append(answers(app))
        await start(agent)

    monkeypatch.setattr(Agent, "start", spied)
    app = make_app(recording([]), session_id=session_id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, limit=60)
        await pilot.pause()
        shown = answers(app)
    assert seen_at_start and seen_at_start[0], "the log was empty when the whole history began to load"
    assert seen_at_start[0][-1] == f"answer {TURNS - 1}"
    assert shown == seen_at_start[0]  # kept as drawn: the whole replay ends with it, nothing drawn twice


async def test_the_next_request_after_a_resume_is_the_one_the_sdk_sends(
    make_app: Callable[..., FreeactApp], executor: Any, tmp_path: Path
) -> None:
    session_id, _ = stored(tmp_path / "sessions")
    shutil.copytree(tmp_path / "sessions", tmp_path / "sdk" / "sessions")

    by_app: list[list[ModelMessage]] = []
    app = make_app(recording(by_app), session_id=session_id)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "and now?")
        await until(pilot, lambda: bool(by_app), limit=60)
        await idle(pilot)

    by_sdk: list[list[ModelMessage]] = []
    agent = make_agent(recording(by_sdk), executor, tmp_path / "sdk", work=tmp_path, session_id=session_id)
    async with agent:
        async for _ in agent.stream("and now?"):
            pass

    history = read_history(tmp_path / "sdk" / "sessions" / session_id / "main.jsonl").messages
    assert len(by_app[0]) == len(by_sdk[0]) == len(history) - 1  # (the SDK turn stored its prompt and answer)
    assert dumped(by_app[0][:-1]) == dumped(by_sdk[0][:-1])  # the whole history, message for message
    assert [p.content for p in by_app[0][-1].parts if p.part_kind == "user-prompt"] == [  # type: ignore[union-attr]
        p.content for p in by_sdk[0][-1].parts if p.part_kind == "user-prompt"  # type: ignore[union-attr]
    ]


@pytest.mark.parametrize("where", ["first", "middle", "in the tail", "last"])
async def test_a_damaged_line_anywhere_gives_the_same_message_and_log(
    make_app: Callable[..., FreeactApp], tmp_path: Path, where: str
) -> None:
    session_id, path = stored(tmp_path / "sessions", turns=40)
    lines = path.read_bytes().count(b"\n")
    line = {"first": 1, "middle": lines // 2, "in the tail": lines - 5, "last": lines - 1}[where]
    damage(path, line, "message")
    loaded = read_history(path)
    assert loaded.damage is not None
    expected = str(loaded.damage)
    before = list(loaded.messages)

    app = make_app(recording([]), session_id=session_id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, limit=60)
        await pilot.pause()
        log = main(app).conversation
        while log.earlier:  # every turn before the damage, drawn
            await log.show_earlier()
            await pilot.pause()
        rows = log_rows(app)
    errors = [r for r in rows if r[0] == "ErrorBlock"]
    assert len(errors) == 1 and expected in errors[0][3]
    shown = [r[3] for r in rows if r[0] == "UserMessageBlock"]
    loaded_prompts = [
        p.content for m in before if m.kind == "request" for p in m.parts if p.part_kind == "user-prompt"
    ]
    assert shown == loaded_prompts  # what loaded before the damage, nothing after it


async def test_a_tail_that_cannot_be_drawn_costs_only_the_head_start(
    make_app: Callable[..., FreeactApp], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The end of the file is a fast path: when drawing it fails, the session opens as before."""
    session_id, _ = stored(tmp_path / "sessions", turns=12)

    def unreadable(*args: object, **kwargs: object) -> list[object]:
        raise OSError("the end of the file could not be read")

    monkeypatch.setattr("freeact_tui.tui.replay_tail.tail_items", unreadable)
    app = make_app(recording([]), session_id=session_id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, limit=60)
        await pilot.pause()
        assert app.startup_error is None and app.agent is not None
        assert answers(app)[-1] == "answer 11"
