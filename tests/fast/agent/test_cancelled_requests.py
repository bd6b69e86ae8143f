"""#45: a request cancelled before any answer is left out of what the model is sent (kernel-free).

It stays in the session (the log shows it, marked cancelled); the model never sees it, so it cannot
answer the next request with the cancelled one. A request cancelled mid-answer keeps what was shown;
one cancelled after actions ran keeps them (their calls need their returns). Generated histories of
such turns, prepared all at once and message by message, must send exactly the prompts that were
not withdrawn.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from freeact_tui.agent.context.window import PreparedHistory
from freeact_tui.agent.history import cancelled_response, unanswered_prompt
from freeact_tui.store.prompt_record import CANCELLED_NOTE
from freeact_tui.store.transcript import NUDGE_KEY

KINDS = ["answered", "unanswered", "thinking", "cut", "acted", "rejected", "nudged"]
WITHDRAWN = {"unanswered", "thinking"}


def turn(kind: str, i: int) -> list[ModelMessage]:
    system = [SystemPromptPart("You are an agent.")] if i == 0 else []  # a session's first request has it
    prompt = ModelRequest(parts=[*system, UserPromptPart(f"request {i}")])
    call = ToolCallPart("ipybox_execute_ipython_cell", {"code": f"print({i})"}, tool_call_id=f"c{i}")
    returned = ModelRequest(parts=[ToolReturnPart(call.tool_name, f"{i}", tool_call_id=f"c{i}")])
    match kind:
        case "answered":
            return [prompt, ModelResponse(parts=[TextPart(f"answer {i}")])]
        case "unanswered":
            return [prompt, cancelled_response(None)]
        case "thinking":
            return [prompt, cancelled_response(ModelResponse(parts=[ThinkingPart("let me think")]))]
        case "cut":
            return [prompt, cancelled_response(ModelResponse(parts=[TextPart(f"partial {i}")]))]
        case "acted":
            return [prompt, ModelResponse(parts=[call]), returned, cancelled_response(None)]
        case "rejected":  # the turn ends on the returns: the next prompt is merged into them
            return [prompt, ModelResponse(parts=[call]), returned]
        case "nudged":  # cancelled while the model answered a nudge: the nudge is the app's, not a prompt
            nudge = ModelRequest(parts=[UserPromptPart("Your reply was empty.")], metadata={NUDGE_KEY: "x"})
            return [prompt, ModelResponse(parts=[TextPart("")]), nudge, cancelled_response(None)]
    raise AssertionError(kind)


def prompts(messages: list[ModelMessage]) -> list[str]:
    return [
        str(p.content)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart) and str(p.content).startswith("request ")
    ]


@given(st.lists(st.sampled_from(KINDS), max_size=8))
def test_only_requests_cancelled_before_any_answer_are_left_out(kinds: list[str]) -> None:
    history = [m for i, kind in enumerate(kinds) for m in turn(kind, i)]
    history.append(ModelRequest(parts=[UserPromptPart(f"request {len(kinds)}")]))  # the next prompt
    if not kinds:
        history[0] = ModelRequest(parts=[SystemPromptPart("You are an agent."), UserPromptPart("request 0")])
    expected = [f"request {i}" for i, kind in enumerate(kinds) if kind not in WITHDRAWN] + [
        f"request {len(kinds)}"
    ]

    whole = list(PreparedHistory().update(history))
    stepwise = PreparedHistory()
    for end in range(1, len(history) + 1):
        sent = list(stepwise.update(history[:end]))
    assert prompts(whole) == expected
    assert isinstance(whole[0], ModelRequest) and isinstance(
        whole[0].parts[0], SystemPromptPart
    )  # never withdrawn
    assert sent == whole  # message by message, as a session grows, the same as at once
    for earlier, later in zip(whole, whole[1:], strict=False):  # roles still alternate
        assert not (isinstance(earlier, ModelRequest) and isinstance(later, ModelRequest))
    unanswered = [kind for kind in kinds if kind in WITHDRAWN]
    notes = sum(isinstance(p, TextPart) and p.content == CANCELLED_NOTE for m in whole for p in m.parts)
    assert notes == kinds.count("acted") + kinds.count("nudged")  # only where calls or a nudge need the close
    assert len(history) - len(whole) >= 2 * len(unanswered)


def test_the_reported_case() -> None:
    """#45: Esc while the model thought about a slow loop, then a one-line arithmetic question."""
    first = ModelRequest(
        parts=[SystemPromptPart("You are an agent."), UserPromptPart("print 1 to 30, one per second")]
    )
    closed = cancelled_response(ModelResponse(parts=[ThinkingPart("a loop with sleep")]))
    second = ModelRequest(parts=[UserPromptPart("What is 6 times 7?")])
    assert unanswered_prompt(first, closed)
    (sent,) = PreparedHistory().update([first, closed, second])
    assert isinstance(sent, ModelRequest) and sent.parts == [first.parts[0], *second.parts]
