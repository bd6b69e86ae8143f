"""A resumed session goes on from its token totals: the app's usage record, the provider's counts
(sessions freeact wrote), and the subagents' usage (counted into the session's, as live)."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.usage import RequestUsage

from freeact_tui.agent.recorder import Recorder
from freeact_tui.agent.usage import UsageMeter, usage_record
from freeact_tui.events import UsageUpdate
from freeact_tui.store.sessions import SessionStore


def test_usage_is_restored_from_the_session_and_its_subagents(tmp_path: Path) -> None:
    session = SessionStore(tmp_path).new_session()
    estimated = UsageUpdate(120, 30, 1, None, estimated=True)  # a server that reported none: our estimate
    priced = UsageUpdate(1000, 200, 1, 0.0125)
    session.append(
        [
            ModelRequest(parts=[UserPromptPart("first")]),
            ModelResponse(parts=[TextPart("a")], metadata=usage_record(estimated)),
            ModelRequest(parts=[UserPromptPart("second")]),
            ModelResponse(parts=[TextPart("b")], metadata=usage_record(priced)),
            ModelRequest(parts=[UserPromptPart("written by freeact")]),
            ModelResponse(parts=[TextPart("c")], usage=RequestUsage(input_tokens=7, output_tokens=3)),
        ]
    )
    session.append(
        [
            ModelRequest(parts=[UserPromptPart("sub task")]),
            ModelResponse(parts=[TextPart("done")], metadata=usage_record(UsageUpdate(50, 5, 1))),
        ],
        agent_id="sub-0a1b",
    )
    session.flush_meta()
    session.unlock()

    recorder = Recorder(tmp_path, session.id, "main", inline_max_bytes=10_000, preview_chars=1000)
    recorder.load()
    meter = UsageMeter("main")
    meter.restore(recorder.past_responses(subagents=True))
    assert meter.totals == UsageUpdate(120 + 1000 + 7 + 50, 30 + 200 + 3 + 5, 4, 0.0125, estimated=True)
    recorder.close()

    alone = UsageMeter("main")
    alone.restore(recorder.past_responses(subagents=False))  # a subagent's own meter: its own responses
    assert (alone.totals.input_tokens, alone.totals.requests) == (1127, 3)


def test_usage_withdrawn_by_a_rewind_still_counts_as_live(tmp_path: Path) -> None:
    """Live, a rewind takes nothing off the totals (the tokens were spent); resumed, neither."""
    session = SessionStore(tmp_path).new_session()
    turns = [(UsageUpdate(100 * n, 10 * n, 1), f"turn {n}") for n in range(1, 5)]
    for usage, text in turns:
        session.append(
            [
                ModelRequest(parts=[UserPromptPart(text)]),
                ModelResponse(parts=[TextPart("ok")], metadata=usage_record(usage)),
            ]
        )
    live = UsageMeter("main")
    for usage, _ in turns:
        live.add(usage)
    session.rewind(4, "back to turn 2")  # turns 3 and 4 withdrawn, live totals unchanged
    session.rewind(2, "back to turn 1")  # and turn 2
    session.flush_meta()
    session.unlock()

    recorder = Recorder(tmp_path, session.id, "main", inline_max_bytes=10_000, preview_chars=1000)
    recorder.load()
    assert len(recorder.stored) == 2
    resumed = UsageMeter("main")
    resumed.restore(recorder.past_responses(subagents=True))
    assert resumed.totals == live.totals
    recorder.close()
