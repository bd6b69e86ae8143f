"""Long sessions: the context gauge, auto and manual compaction, its session record, resume, rollback.

The only stand-in is the model: ``WindowedModel`` fails like a provider when a request is larger
than its window, and summarises by keeping the ``FACT:`` sentences it is sent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, UserPromptPart

from freeact_tui.agent.context.compaction import SUMMARY_INSTRUCTION
from freeact_tui.events import AgentError, AgentEvent, Compacted, Compacting, ContextUpdate
from freeact_tui.store.compaction import SUMMARY_HEADER, compaction_info
from freeact_tui.store.event_record import EVENT_KEY
from tests.helpers import FILLER, WINDOW, chat, fact, freeact_load, of, turn
from tests.helpers import windowed_agent as make_agent
from tests.windowed import WindowedModel, answers


async def test_past_the_window_compaction_keeps_facts_and_no_provider_error(tmp_path: Path) -> None:
    model = WindowedModel(WINDOW)
    async with make_agent(model, tmp_path) as agent:
        events = await chat(agent, 20)
        events += await turn(agent, "What is the code of item2?")
    assert of(events, AgentError) == []
    compactions = of(events, Compacted)
    assert compactions and all(c.reason == "auto" for c in compactions)
    assert all(c.tokens_after < c.tokens_before for c in compactions)
    assert of(events, Compacting)  # the progress indicator's start event
    assert model.summaries >= len(compactions)
    assert model.largest <= WINDOW  # the provider never saw an oversized request
    # The first facts live only in the summary now, and the answer still uses them.
    first_request_text = json.dumps([str(p) for p in model.requests[-1][0].parts])
    assert SUMMARY_HEADER[:20] in first_request_text
    assert answers(agent.history)[-1] == f"The code of item2 is c{2 * 7919 % 10007}."
    gauges = of(events, ContextUpdate)
    assert gauges and max(g.fraction for g in gauges) < 1.0 and gauges[-1].window == WINDOW
    assert gauges[-1].source == "setting"


async def test_without_compaction_the_provider_error_happens(tmp_path: Path) -> None:
    """The same chat with compaction out of reach fails: the scenario above really needs it."""
    model = WindowedModel(WINDOW)
    async with make_agent(model, tmp_path, context_window=WINDOW * 10, trim_result_chars=0) as agent:
        events = await chat(agent, 20)
    errors = of(events, AgentError)
    assert errors and "context_length_exceeded" in errors[0].message


async def test_session_file_has_the_record_and_resume_loads_compacted_history(tmp_path: Path) -> None:
    model = WindowedModel(WINDOW)
    async with make_agent(model, tmp_path) as agent:
        await chat(agent, 20)
        session_id = agent.session_id
        live = [m.parts for m in agent.history]
        stored_count = len(agent.recorder.stored)
    path = tmp_path / "sessions" / session_id / "main.jsonl"
    by_freeact = freeact_load(path)  # freeact reads every message, summary included, as a valid history
    assert len(by_freeact) == stored_count
    records = [m for m in by_freeact if compaction_info(m) is not None]
    assert records and all(isinstance(r, ModelRequest) for r in records)
    assert isinstance(records[0].parts[0], UserPromptPart)
    assert str(records[0].parts[0].content).startswith(SUMMARY_HEADER)

    resumed = WindowedModel(WINDOW)
    async with make_agent(resumed, tmp_path, session_id=session_id) as again:
        assert [m.parts for m in again.history] == live  # the compacted history, not the whole file
        assert len(again.recorder.stored) == stored_count
        assert again.context_usage().used < WINDOW * 0.85
        events = await turn(again, "What is the code of item1?")
    assert of(events, AgentError) == []
    assert answers(again.history)[-1] == f"The code of item1 is c{7919 % 10007}."
    first = resumed.requests[0][0]
    assert first.parts[0].part_kind == "system-prompt"  # the session's system prompt, then the summary
    assert SUMMARY_HEADER in str(first.parts[1].content)  # type: ignore[union-attr]


async def test_compact_by_hand_with_focus(tmp_path: Path) -> None:
    model = WindowedModel(WINDOW)
    async with make_agent(model, tmp_path) as agent:
        await chat(agent, 4)
        before = len(agent.history)
        seen: list[AgentEvent] = []
        agent.subscribe(seen.append)
        result = await agent.compact("the item codes")
        assert result is not None and result.reason == "manual"
        assert len(agent.history) < before
        assert "focus: the item codes" in result.summary
        assert of(seen, Compacting) and of(seen, Compacted) and of(seen, ContextUpdate)
        summary_request = model.requests[-1]
        assert SUMMARY_INSTRUCTION in str(summary_request[0].parts[0].content)  # type: ignore[union-attr]
        events = await turn(agent, "What is the code of item0?")
    assert answers(agent.history)[-1] == f"The code of item0 is c{0}."
    assert of(events, AgentError) == []


async def test_nothing_to_compact_in_a_fresh_session(tmp_path: Path) -> None:
    model = WindowedModel(WINDOW)
    async with make_agent(model, tmp_path) as agent:
        assert await agent.compact() is None
        await turn(agent, "hello")
        assert await agent.compact() is None  # one turn: nothing older than the recent turns
    assert model.summaries == 0


async def test_failed_request_after_compaction_rolls_back_the_turn_and_the_record(tmp_path: Path) -> None:
    model = WindowedModel(WINDOW, fail_on="BOOM")
    async with make_agent(model, tmp_path) as agent:
        # Fill the window up to just below the threshold.
        i = 0
        while agent.context_usage().fraction < 0.7:
            await turn(agent, f"{fact(i)} {FILLER}")
            i += 1
        history = list(agent.history)
        path = tmp_path / "sessions" / agent.session_id / "main.jsonl"
        lines = path.read_text().splitlines()
        events = await turn(agent, f"BOOM {FILLER * 3}")
        assert of(events, Compacted)  # it compacted first, then the model failed
        assert of(events, AgentError) and of(events, AgentError)[0].kind == "model"
        assert agent.history == history
        *kept, record = path.read_text().splitlines()
        assert kept == lines  # the record of the compaction went with the turn; only the error's record came
        withdrawn = json.loads(record)["message"]["metadata"][EVENT_KEY]["withdrawn"]
        assert [
            compaction_info(m) is not None for m in ModelMessagesTypeAdapter.validate_python(withdrawn)
        ] == [
            False,
            True,
        ]  # the prompt and the compaction the user saw before the error, kept for the log only
        events = await turn(agent, "What is the code of item0?")
    assert of(events, AgentError) == []
    assert answers(agent.history)[-1] == f"The code of item0 is c{0}."


async def test_export_and_show_mark_the_compaction(tmp_path: Path) -> None:
    from freeact_tui.store.export import render

    model = WindowedModel(WINDOW)
    async with make_agent(model, tmp_path) as agent:
        await chat(agent, 4)
        await agent.compact()
        transcript = agent.transcript
    text = render(transcript, "md", title="t")
    assert "Context compacted (" in text and "earlier messages summarised for the model" in text
    assert text.count("FACT: the code of item0") >= 2  # the turn itself, and the summary that keeps it


def test_window_setting_wins_then_provider_then_table_then_default(monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic_ai.models import infer_model
    from pydantic_ai.models.function import FunctionModel

    from freeact_tui.agent.context import DEFAULT_WINDOW, resolve_window

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # building the model only; nothing is sent
    openai = infer_model("openai:gpt-4o")
    assert resolve_window(openai, 50_000) == (50_000, "setting")
    assert resolve_window(openai) == (128_000, "provider")

    def function(messages: object, info: object) -> object:
        raise AssertionError("never called")

    assert resolve_window(FunctionModel(function, model_name="gemini-2.5-flash-lite")) == (1_048_576, "table")
    assert resolve_window(FunctionModel(function, model_name="my-local-model")) == (DEFAULT_WINDOW, "default")


def test_gauge_uses_the_providers_count_until_the_history_is_rewritten(tmp_path: Path) -> None:
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.usage import RequestUsage

    from freeact_tui.store.compaction import head_message

    agent = make_agent(WindowedModel(WINDOW), tmp_path)
    counted = ModelResponse(
        parts=[TextPart("an answer")], usage=RequestUsage(input_tokens=2_000, output_tokens=10)
    )
    for message in (ModelRequest(parts=[UserPromptPart("x " * 200)]), counted):
        agent.recorder.record(message)
    agent.recorder.record(ModelRequest(parts=[UserPromptPart("next")]))
    usage = agent.context_usage()
    assert not usage.estimated and usage.used == 2_010 + 1  # the count, plus the estimate of what came after
    record = ModelRequest(parts=[UserPromptPart(f"{SUMMARY_HEADER}\n\nshort")])
    agent.recorder.compact(record, head_message(agent.history[0], record), 1)
    usage = agent.context_usage()  # the kept answer's count describes the history before the compaction
    assert usage.estimated and usage.used < 2_000
