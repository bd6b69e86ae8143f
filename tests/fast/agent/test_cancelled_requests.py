"""#45: what a cancelled request sends the model, wherever the cancel came (kernel-free).

A request cancelled before any answer (before a token, mid-thinking, mid-tool-call) is left out of
what the model is sent — kept in the session, where the log shows it cancelled; one cancelled
mid-text keeps what was shown; one cancelled during an action keeps the calls and their returns.
The app's close of a cancelled request is never sent as the model's words. Generated sessions with
cancels at every point, after prompts, tool results, text-action results, nudges and steering, are
recorded with ``close_for`` (what ``Turn._finish_cancelled`` records) and prepared as the model
gets them (``PreparedHistory``: live message by message, and all at once as a resumed session).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from freeact_tui.agent.cancels import CONTRIBUTIONS, CancelPoint, as_sent, close_for, contribution, point_of
from freeact_tui.agent.context.compaction import render_for_summary
from freeact_tui.agent.context.window import PreparedHistory
from freeact_tui.agent.history import interrupted_returns
from freeact_tui.agent.turn.state import TurnState
from freeact_tui.events import Phase
from freeact_tui.store.meta_keys import NUDGE_KEY, SWITCH_KEY, TEXT_ACTIONS_KEY
from freeact_tui.store.prompt_record import CANCELLED_NOTE, prompt_metadata, shell_context

TOOL = "ipybox_execute_ipython_cell"

STEPS = ["call", "text_action", "nudge", "switch"]
"""What a turn did before its end: a tool call and its return, a code block and its results message,
a reply that was no answer and the nudge after it, the switch to text actions."""

ENDS: dict[str, tuple[Phase, ModelResponse | None]] = {
    "answered": (Phase.MODEL, None),
    "before any token": (Phase.MODEL, None),
    "before the request": (Phase.IDLE, None),  # e.g. while the kernel started
    "mid-thinking": (Phase.MODEL, ModelResponse(parts=[ThinkingPart("a loop with sleep")])),
    "mid-tool-call": (
        Phase.MODEL,
        ModelResponse(parts=[ToolCallPart(TOOL, '{"code": "for i in', tool_call_id="half")]),
    ),
    "thinking, then a tool call": (
        Phase.MODEL,
        ModelResponse(parts=[ThinkingPart("loop"), ToolCallPart(TOOL, '{"co', tool_call_id="half")]),
    ),
    "mid-text": (Phase.MODEL, ModelResponse(parts=[ThinkingPart("hm"), TextPart("The answer is")])),
    "text, then a tool call": (
        Phase.MODEL,
        ModelResponse(parts=[TextPart("Let me run"), ToolCallPart(TOOL, '{"code', tool_call_id="half")]),
    ),
    "during approval": (Phase.APPROVAL, None),
    "during execution": (Phase.EXECUTION, None),
    "during a subagent": (Phase.SUBAGENT, None),
}
UNANSWERED = {
    "before any token",
    "before the request",
    "mid-thinking",
    "mid-tool-call",
    "thinking, then a tool call",
}
"""The ends where the request got no answer: what it asked is left out."""


@dataclass(frozen=True)
class Turn:
    shell: bool
    steps: tuple[str, ...]
    steer: bool
    end: str


turns = st.builds(
    Turn,
    shell=st.booleans(),
    steps=st.lists(st.sampled_from(STEPS), max_size=2).map(tuple),
    steer=st.booleans(),
    end=st.sampled_from(list(ENDS)),
)


def record(turns: list[Turn]) -> tuple[list[ModelMessage], set[str], set[str]]:
    """The session of ``turns`` as the agent records it; the asks the model must get, and those it must not."""
    history: list[ModelMessage] = []
    sent: set[str] = set()
    withheld: set[str] = set()
    for i, t in enumerate(turns):
        system = [SystemPromptPart("You are an agent.")] if i == 0 else []
        head = shell_context(f"echo shell{i}", f"shell{i}", False) + "\n\n" if t.shell else ""
        asks = [f"request {i}"]
        history.append(
            ModelRequest(
                parts=[*system, UserPromptPart(f"{head}request {i}")],
                metadata=prompt_metadata(len(head)),
            )
        )
        for k, step in enumerate(t.steps):
            history.extend(_step(step, f"{i}.{k}"))
            sent.update(asks)  # a reply came: what was asked so far got an answer
            asks = [f"nudge {i}.{k}"] if step == "nudge" else []
        if t.steer and t.steps:  # a message typed into the running turn, after a step
            history.append(ModelRequest(parts=[UserPromptPart(f"steer {i}")]))
            asks.append(f"steer {i}")
        phase, partial = ENDS[t.end]
        if t.end == "answered":
            history.append(ModelResponse(parts=[TextPart(f"answer {i}")]))
        elif phase in (Phase.APPROVAL, Phase.EXECUTION, Phase.SUBAGENT):
            call = ToolCallPart(TOOL, {"code": "import time; time.sleep(60)"}, tool_call_id=f"slow{i}")
            history.append(ModelResponse(parts=[call]))
            history.append(interrupted_returns([call], {}))
        close = close_for(phase, history, partial)
        assert (close is None) == (t.end == "answered" or phase not in (Phase.MODEL, Phase.IDLE))
        if close is not None:
            history.append(close)
        (withheld if t.end in UNANSWERED else sent).update(asks)
    return history, sent, withheld


def _step(step: str, n: str) -> list[ModelMessage]:
    match step:
        case "call":
            call = ToolCallPart(TOOL, {"code": f"print('{n}')"}, tool_call_id=f"c{n}")
            return [
                ModelResponse(parts=[call]),
                ModelRequest(parts=[ToolReturnPart(TOOL, f"out {n}", tool_call_id=f"c{n}")]),
            ]
        case "text_action":
            results = ModelRequest(
                parts=[UserPromptPart(f"Output of your code block:\nout {n}")],
                metadata={TEXT_ACTIONS_KEY: []},
            )
            return [ModelResponse(parts=[TextPart(f"```python\nprint('{n}')\n```")]), results]
        case "nudge":
            nudge = ModelRequest(parts=[UserPromptPart(f"nudge {n}")], metadata={NUDGE_KEY: "no answer"})
            return [ModelResponse(parts=[TextPart(f"I will do {n}")]), nudge]
        case "switch":
            switch = ModelRequest(
                parts=[UserPromptPart(f"switch {n}")], metadata={SWITCH_KEY: "broken calls"}
            )
            return [ModelResponse(parts=[ToolCallPart("nonexistent", "{", tool_call_id=f"b{n}")]),
                    ModelRequest(parts=[ToolReturnPart("nonexistent", "unknown tool", tool_call_id=f"b{n}", outcome="retried")]),
                    ModelResponse(parts=[TextPart("")]), switch]  # fmt: skip
    raise AssertionError(step)


def texts(messages: list[ModelMessage], kind: type) -> str:
    return "\n".join(str(getattr(p, "content", "")) for m in messages if isinstance(m, kind) for p in m.parts)


def parts_of(messages: list[ModelMessage]) -> list[list[object]]:
    """The messages' parts, adjacent requests merged (as they are sent)."""
    out: list[list[object]] = []
    for before, message in zip([None, *messages], messages, strict=False):
        if isinstance(message, ModelRequest) and isinstance(before, ModelRequest):
            out[-1].extend(message.parts)
        else:
            out.append(list(message.parts))
    return out


def assert_well_formed(messages: list[ModelMessage]) -> None:
    """What providers require of a history (pydantic-ai sends it as it is): it opens with the system
    prompt in a request, roles alternate, no response is empty, every tool call is answered in the next
    request and every return answers a call of the response before it."""
    assert isinstance(messages[0], ModelRequest) and isinstance(messages[0].parts[0], SystemPromptPart)
    for before, after in zip(messages, messages[1:], strict=False):
        assert type(before) is not type(after), "roles must alternate"
    for index, message in enumerate(messages):
        if isinstance(message, ModelResponse):
            assert message.parts, "an empty response"
            continue
        before = messages[index - 1] if index > 0 else None
        calls = {p.tool_call_id for p in (before.parts if before else []) if isinstance(p, ToolCallPart)}
        returns = {
            p.tool_call_id
            for p in message.parts
            if isinstance(p, ToolReturnPart | RetryPromptPart) and p.tool_name is not None
        }
        assert calls == returns, "every call answered, every return of a call"


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)  # a loaded CI machine
@given(st.lists(turns, max_size=6))
def test_what_a_cancelled_request_sends(session: list[Turn]) -> None:
    history, sent_asks, withheld = record(session)
    history.append(ModelRequest(parts=[UserPromptPart("the next request")]))
    if len(history) == 1:
        history[0] = ModelRequest(
            parts=[SystemPromptPart("You are an agent."), UserPromptPart("the next request")]
        )

    resumed = list(PreparedHistory().update(history))  # a resumed session: all at once
    live = PreparedHistory()
    for end in range(1, len(history) + 1):  # live: message by message, as the session grows
        sent = list(live.update(history[:end]))
    assert sent == resumed
    assert parts_of(sent) == parts_of(as_sent(history))  # what reads the history whole reads the same

    assert_well_formed(sent)
    said = texts(sent, ModelRequest)
    for ask in sent_asks:
        assert ask in said
    for ask in withheld:  # "request 1" must not match "request 10": there are at most 6
        assert ask not in said, f"{ask} was cancelled before any answer"
        assert ask not in render_for_summary(history)  # nor does a compaction summarise it
    assert CANCELLED_NOTE not in texts(sent, ModelResponse)  # the app's words are never the model's
    # What records what happened stays: what every call returned, every results message, the user's
    # own `!command` runs, the switch to text actions.
    stored = texts(history, ModelRequest)
    for line in stored.splitlines():
        if line.startswith(("out ", "switch ", "shell", "Interrupted")) or "[I ran `echo" in line:
            assert line in said


@pytest.mark.parametrize(
    ("end", "point"),
    [
        ("before any token", CancelPoint.BEFORE_REPLY),
        ("before the request", CancelPoint.BEFORE_REPLY),
        ("mid-thinking", CancelPoint.THINKING),
        ("mid-tool-call", CancelPoint.TOOL_CALL),
        ("thinking, then a tool call", CancelPoint.TOOL_CALL),
        ("mid-text", CancelPoint.TEXT),
        ("text, then a tool call", CancelPoint.TEXT),
        ("during approval", CancelPoint.ACTION),
        ("during execution", CancelPoint.ACTION),
        ("during a subagent", CancelPoint.ACTION),
    ],
)
def test_where_a_cancel_came(end: str, point: CancelPoint) -> None:
    phase, partial = ENDS[end]
    assert point_of(phase, partial) is point
    prompt = ModelRequest(parts=[UserPromptPart("print 1 to 30, one per second")])
    close = close_for(phase, [prompt], partial)
    if not CONTRIBUTIONS[point].close:
        assert close is None
        return
    assert close is not None
    assert contribution(close) == CONTRIBUTIONS[point]  # the stored close reads as the same row


def test_the_reported_case() -> None:
    """#45: Esc while the model thought about a slow loop, then a one-line arithmetic question."""
    first = ModelRequest(
        parts=[SystemPromptPart("You are an agent."), UserPromptPart("print 1 to 30, one per second")]
    )
    closed = close_for(Phase.MODEL, [first], ModelResponse(parts=[ThinkingPart("a loop with sleep")]))
    assert closed is not None
    second = ModelRequest(parts=[UserPromptPart("What is 6 times 7?")])
    (sent,) = PreparedHistory().update([first, closed, second])
    assert isinstance(sent, ModelRequest) and sent.parts == [first.parts[0], *second.parts]


def test_a_cancel_after_a_tool_result_sends_the_result_not_the_note() -> None:
    """The path the first fix left open: the model was answering a tool result when Esc came; its
    close went to the model as its own words ("[The user cancelled this request…]")."""
    call = ToolCallPart(TOOL, {"code": "print(6 * 7)"}, tool_call_id="c1")
    history: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart("You are an agent."), UserPromptPart("6 times 7?")]),
        ModelResponse(parts=[call]),
        ModelRequest(parts=[ToolReturnPart(TOOL, "42", tool_call_id="c1")]),
    ]
    close = close_for(Phase.MODEL, history, None)
    assert close is not None and CANCELLED_NOTE in texts([close], ModelResponse)  # kept for freeact
    history += [close, ModelRequest(parts=[UserPromptPart("and 6 times 8?")])]
    sent = list(PreparedHistory().update(history))
    assert_well_formed(sent)
    assert len(sent) == 3 and texts(sent[2:], ModelRequest) == "42\nand 6 times 8?"


def test_a_cancel_after_the_reply_cuts_nothing_of_it() -> None:
    """A cancel between a reply's calls (or after its returns, before the next request) comes after the
    reply: the reply is in the history already, so the close must not repeat its text as a cut reply."""
    state = TurnState()
    reply = ModelResponse(
        parts=[TextPart("I will run two cells."), ToolCallPart(TOOL, {"code": "1"}, tool_call_id="c1")]
    )
    state.streamed(lambda: reply)
    assert state.response == reply  # mid-stream: what was streamed
    state.received = True  # as ``Turn.run`` marks it when the request ends
    history: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart("You are an agent."), UserPromptPart("two cells")]),
        reply,
        ModelRequest(parts=[ToolReturnPart(TOOL, "1", tool_call_id="c1")]),
    ]
    close = close_for(state.phase, history, state.response)
    assert close is not None and contribution(close) == CONTRIBUTIONS[CancelPoint.BEFORE_REPLY]
    sent = list(PreparedHistory().update([*history, close, ModelRequest(parts=[UserPromptPart("next")])]))
    assert texts(sent, ModelResponse).count("I will run two cells.") == 1
    state.next_step()
    assert not state.received and state.response is None


def test_a_session_written_before_the_cut_record_reads_the_same() -> None:
    """Sessions of before 2026-11-27 closed a cancelled request with the note alone (no metadata)."""
    first = ModelRequest(parts=[SystemPromptPart("You are an agent."), UserPromptPart("print 1 to 30")])
    old_close = ModelResponse(parts=[TextPart(CANCELLED_NOTE)])
    second = ModelRequest(parts=[UserPromptPart("What is 6 times 7?")])
    (sent,) = PreparedHistory().update([first, old_close, second])
    assert isinstance(sent, ModelRequest) and sent.parts == [first.parts[0], *second.parts]
