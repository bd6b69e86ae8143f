"""A long session opens at its end: the last turns are drawn first, the earlier ones from the keyboard.

The app resumes a stored session of many turns (a real kernel, the real app under Pilot); what is
mounted is asserted, not timed (``bench/long_session.py`` times it). The splitting into turns is a
property: batches taken from the end never cut a turn, and together are the whole history, in order.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    UserPromptPart,
)

from freeact_tui.store.sessions import SessionStore
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.widgets.blocks import ResponseBlock, UserMessageBlock
from freeact_tui.tui.widgets.earlier_turns import EARLIER_ID, EarlierTurns, turn_start
from tests import helpers
from tests.helpers import main, ready, until

executor = helpers.kernel
make_app = helpers.chat_app
SIZE = (100, 30)
TURNS = 90


def stored_session(sessions: Path) -> str:
    """A session of ``TURNS`` turns: a prompt, a thought and a Markdown answer each."""
    session = SessionStore(sessions, fsync=False).new_session()
    messages: list[ModelMessage] = []
    for i in range(TURNS):
        messages += [
            ModelRequest(parts=[UserPromptPart(f"question {i}")]),
            ModelResponse(
                parts=[ThinkingPart(f"thinking about {i}"), TextPart(f"answer {i}\n\n- a list\n- of two")]
            ),
        ]
    session.append(messages)
    session.flush_meta()
    return session.id


def prompts(app: FreeactApp) -> list[str]:
    return [b.text for b in main(app).conversation.query(UserMessageBlock)]


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_a_long_session_shows_its_last_turn_first_and_earlier_turns_from_the_keyboard(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    session_id = stored_session(tmp_path / "sessions")
    app = make_app(_idle_model(), session_id=session_id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot, limit=60)
        log = screen.conversation
        await pilot.pause()
        answers = log.query(ResponseBlock)
        assert answers and answers.last().text.startswith(f"answer {TURNS - 1}")
        assert answers.last().region.height > 0  # on the screen, not only mounted
        first = prompts(app)
        assert first[-1] == f"question {TURNS - 1}"
        assert len(first) < TURNS // 3, len(first)  # the last turns only
        assert first == [f"question {i}" for i in range(TURNS - len(first), TURNS)]
        note = str(log.query_one(f"#{EARLIER_ID}").render())
        assert f"{TURNS - len(first)} earlier turns" in note and EarlierTurns.KEY in note

        screen.prompt.focus()
        await pilot.press("home")  # from the prompt: the turns just before are drawn above
        await until(pilot, lambda: len(prompts(app)) > len(first))
        await pilot.pause()
        more = prompts(app)
        assert more == [f"question {i}" for i in range(TURNS - len(more), TURNS)]  # in order, no gap
        top = log.query(UserMessageBlock).first()
        assert top.region.height > 0 and log.scroll_y == 0  # Home: the earliest drawn turn is in view

        await pilot.press("pageup")  # at the top: the turns before are drawn, the view stays in place
        await until(pilot, lambda: len(prompts(app)) > len(more))
        await pilot.pause()
        assert top.region.height > 0 and log.scroll_y > 0
        assert prompts(app) == [f"question {i}" for i in range(TURNS - len(prompts(app)), TURNS)]

        for _ in range(TURNS):  # every earlier turn can be brought in
            if not log.earlier:
                break
            await pilot.press("home")
            await pilot.pause()
        await until(pilot, lambda: not log.earlier and not log.query(f"#{EARLIER_ID}"))
        assert prompts(app) == [f"question {i}" for i in range(TURNS)]
        assert [b.text.split("\n")[0] for b in log.query(ResponseBlock)] == [
            f"answer {i}" for i in range(TURNS)
        ]


def _idle_model() -> object:
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    async def stream(messages: list[ModelMessage], info: AgentInfo):  # type: ignore[no-untyped-def]
        yield "ok"

    return FunctionModel(stream_function=stream, model_name="idle")


@given(
    starts=st.lists(st.booleans(), max_size=60),
    at_least=st.integers(min_value=0, max_value=20),
)
def test_batches_from_the_end_never_cut_a_turn_and_lose_nothing(starts: list[bool], at_least: int) -> None:
    items = list(enumerate(starts))
    is_start = lambda item: item[1]  # noqa: E731

    earlier = EarlierTurns()
    shown = earlier.hold(items, at_least, is_start, draw=None)  # type: ignore[arg-type]
    batches = [shown]
    while earlier:
        batches.append(earlier.take(at_least))
    assert [i for batch in reversed(batches) for i in batch] == items  # all, once, in order
    for batch in batches[:-1]:  # every batch but the oldest starts a turn and holds enough items
        assert is_start(batch[0]) and len(batch) >= max(1, at_least)
    cut = turn_start(items, at_least, is_start)
    assert cut == 0 or (len(items) - cut >= at_least and is_start(items[cut]))
