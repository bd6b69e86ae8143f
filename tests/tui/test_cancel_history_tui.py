"""#45: Esc on a request, then a new one — what the model is sent next, live and after a resume.

The real app under Pilot on a real kernel; the model is a scripted FunctionModel that records every
request it gets. A request cancelled before any answer (while the model thought, or while it was
answering a tool result) is not in the next request, and the app's close of it is never sent as the
model's words; the log still shows the cancel. A resumed session sends the same history.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from freeact_tui.store.prompt_record import CANCELLED_NOTE
from freeact_tui.tui.app import FreeactApp
from tests import helpers
from tests.helpers import SIZE, idle, main, ready, send, until
from tests.scripted import Code, Script, Think, Wait, script

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300), pytest.mark.asyncio(loop_scope="module")]

executor = helpers.kernel
chat_app = helpers.chat_app

CANCELLED = "print the numbers 1 to 30, one per second"


def shape(messages: list[ModelMessage]) -> list[tuple[str, list[tuple[str, str]]]]:
    """A history as roles and parts (its timestamps aside)."""
    return [
        (type(m).__name__, [(type(p).__name__, str(getattr(p, "content", p))) for p in m.parts])
        for m in messages
    ]


def user_texts(messages: list[ModelMessage]) -> list[str]:
    return [
        str(p.content)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    ]


def assert_valid(messages: list[ModelMessage]) -> None:
    """Roles alternate from a request with the system prompt; every call is answered next; the app's
    close of a cancelled request is not among the model's words."""
    assert isinstance(messages[0], ModelRequest) and isinstance(messages[0].parts[0], SystemPromptPart)
    for before, after in zip(messages, messages[1:], strict=False):
        assert type(before) is not type(after)
        if isinstance(before, ModelResponse):
            calls = {p.tool_call_id for p in before.parts if isinstance(p, ToolCallPart)}
            assert calls == {p.tool_call_id for p in after.parts if isinstance(p, ToolReturnPart)}
    said = [
        p.content
        for m in messages
        if isinstance(m, ModelResponse)
        for p in m.parts
        if isinstance(p, TextPart)
    ]
    assert CANCELLED_NOTE not in said


@pytest.mark.parametrize("where", ["thinking", "after a tool result"])
async def test_esc_then_a_new_request(chat_app: Callable[..., FreeactApp], where: str) -> None:
    gate = asyncio.Event()  # never set: the model is still answering when Esc comes
    if where == "thinking":
        s = script([Think("a loop with time.sleep(1)"), Wait(gate), "never"], ["42"])
    else:
        s = script([Code("print(6 * 7)")], [Think("now the loop"), Wait(gate), "never"], ["42"])
    app = chat_app(s, {"skip_permissions": True})
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, CANCELLED)
        waiting = len(s.steps) - 1  # the request Esc cancels
        await until(pilot, lambda: len(s.requests) == waiting, limit=60)
        await pilot.pause(0.3)  # its thoughts stream
        await pilot.press("escape")
        await idle(pilot)
        await send(pilot, "What is 6 times 7?")
        await idle(pilot)
        agent = main(app).agent
        assert agent is not None
        session_id = agent.session_id
        stored = user_texts(agent.history)

    sent = s.requests[-1]
    assert_valid(sent)
    assert user_texts(sent)[-1] == "What is 6 times 7?"
    if where == "thinking":  # the request got no answer at all: it is left out
        assert CANCELLED not in user_texts(sent)
    else:  # it got one, the call; what the model was asked about its result, nothing
        assert user_texts(sent) == [CANCELLED, "What is 6 times 7?"]
        assert any(isinstance(p, ToolReturnPart) and "42" in str(p.content) for p in sent[-1].parts)
    assert stored[0] == CANCELLED  # ... and it is kept in the session

    # Resumed: the same history goes to the model, then the new request.
    again = Script([["fine"]])
    resumed = chat_app(again, {"skip_permissions": True}, session_id=session_id)
    async with resumed.run_test(size=SIZE) as pilot:
        await ready(pilot, limit=30)
        await send(pilot, "Thanks.")
        await idle(pilot)
    (first,) = again.requests
    live = [*sent, ModelResponse(parts=[TextPart("42")])]
    assert shape(first[: len(live)]) == shape(live)
    assert user_texts(first)[-1] == "Thanks."
