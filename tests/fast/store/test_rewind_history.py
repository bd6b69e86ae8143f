"""A conversation rewind and compaction together: the file positions the recorder keeps (compaction
records' ``kept_from``, ``Recorder.cut``) stay right when the file is rewritten by a rewind, in
either order, live and after a resume — and freeact's loader always sees the kept lines + marker."""

from __future__ import annotations

from pathlib import Path

from freeact_tui.agent.agent import Agent
from freeact_tui.agent.rewind import rewind
from freeact_tui.events import AgentError
from freeact_tui.store.compaction import compaction_info
from freeact_tui.store.export import render_text
from freeact_tui.store.sessions import SessionStore
from tests.helpers import WINDOW, chat, fact, freeact_load, of, turn
from tests.helpers import windowed_agent as make_agent
from tests.windowed import WindowedModel, answers


async def rewind_to(agent: Agent, prompt_start: str) -> int:
    """Rewind the conversation to before the user message starting with ``prompt_start``; return
    how many messages of the file stay."""
    (target,) = [t for t in agent.checkpointing.turns() if t.text.startswith(prompt_start)]
    lines = agent.recorder.cut_lines(target.msg_index)
    plan = await agent.checkpointing.plan_rewind(target)
    await rewind(agent, plan, files=False, conversation=True)
    assert len(agent.history) == target.msg_index
    return lines


def main_file(tmp_path: Path, agent: Agent) -> Path:
    return tmp_path / "sessions" / agent.session_id / "main.jsonl"


def assert_freeact_sees_stored_plus_marker(path: Path, agent: Agent, kept: int) -> None:
    """freeact's loader: the stored messages up to the cut, the marker, then what came after it."""
    by_freeact = freeact_load(path)
    stored = agent.recorder.stored
    assert by_freeact[:kept] == stored[:kept]
    assert "rewound the conversation" in str(by_freeact[kept].parts[0].content)  # type: ignore[union-attr]
    assert by_freeact[kept + 1 :] == stored[kept:]


async def resume_matches(tmp_path: Path, agent: Agent) -> Agent:
    again = make_agent(WindowedModel(WINDOW), tmp_path, session_id=agent.session_id)
    async with again:
        assert [m.parts for m in again.history] == [m.parts for m in agent.history]
        assert again.recorder.stored == agent.recorder.stored
        assert again.recorder.positions == agent.recorder.positions
        assert [(m.at, m.withdrawn_turns) for m in again.recorder.rewinds] == [
            (m.at, m.withdrawn_turns) for m in agent.recorder.rewinds
        ]
    return again


async def test_rewind_after_compaction(tmp_path: Path) -> None:
    model = WindowedModel(WINDOW)
    async with make_agent(model, tmp_path) as agent:
        await chat(agent, 6)
        assert await agent.compact() is not None
        await turn(agent, f"{fact(6)} later one")
        await turn(agent, f"{fact(7)} later two")
        stored_before = list(agent.recorder.stored)
        kept = await rewind_to(agent, fact(6))
        assert agent.recorder.stored == stored_before[:kept]
        assert compaction_info(agent.recorder.stored[-1]) is not None  # the record stays, the turns after go
        path = main_file(tmp_path, agent)
        assert_freeact_sees_stored_plus_marker(path, agent, kept)
        assert len(freeact_load(path)) == kept + 1
        # The model sees the compacted history (the summary keeps facts 0-5), not the withdrawn turns
        # (the note quotes the message rewound to: fact 6; fact 7 is gone).
        events = await turn(agent, "What is the code of item7?")
        assert of(events, AgentError) == [] and answers(agent.history)[-1] == "The code of item7 is unknown."
        events = await turn(agent, "What is the code of item2?")
        assert answers(agent.history)[-1] == f"The code of item2 is c{2 * 7919 % 10007}."
        assert_freeact_sees_stored_plus_marker(path, agent, kept)
    await resume_matches(tmp_path, agent)


async def test_compaction_after_rewind_and_a_rewind_after_that(tmp_path: Path) -> None:
    model = WindowedModel(WINDOW)
    async with make_agent(model, tmp_path) as agent:
        await chat(agent, 6)
        first_cut = await rewind_to(agent, fact(4))
        await turn(agent, f"{fact(40)} after the rewind")
        await turn(agent, f"{fact(41)} after the rewind")
        result = await agent.compact()
        assert result is not None
        record = agent.recorder.stored[-1]
        info = compaction_info(record)
        assert info is not None
        # kept_from points at the right message of the file as loaded (the rewind's marker is no message).
        assert agent.history[1:] == agent.recorder.stored[info.kept_from : -1]
        path = main_file(tmp_path, agent)
        assert_freeact_sees_stored_plus_marker(path, agent, first_cut)
        await resume_matches(tmp_path, agent)

        # A rewind after the compaction, to a turn the compaction kept verbatim.
        await turn(agent, f"{fact(42)} after the compaction")
        second_cut = await rewind_to(agent, fact(42))
        assert compaction_info(agent.recorder.stored[-1]) is not None  # the record stays
        assert len(freeact_load(path)) == second_cut + 2  # both markers are in the kept lines
        assert (path.parent / "rewound" / "main.2.jsonl").is_file()
        events = await turn(agent, "What is the code of item41?")
        assert of(events, AgentError) == [] and answers(agent.history)[-1].startswith(
            "The code of item41 is c"
        )
        events = await turn(agent, "What is the code of item5?")  # withdrawn by the first rewind
        assert answers(agent.history)[-1] == "The code of item5 is unknown."
    again = await resume_matches(tmp_path, agent)
    assert [m.at for m in again.recorder.rewinds] == [first_cut, second_cut]

    # `sessions show` marks both rewinds where they happened, with where the withdrawn turns are kept.
    loaded = SessionStore(tmp_path / "sessions").session(agent.session_id).load()
    text = render_text(loaded.messages, rewinds=loaded.rewinds)
    assert text.count("── Rewound") == 2
    assert "2 turns (4 messages) withdrawn; kept in " + str(path.parent / "rewound" / "main.1.jsonl") in text
    assert text.index(fact(3)) < text.index("main.1.jsonl") < text.index(fact(40))
