"""Event records and the other stored things a resumed log draws, as rows of (stored → replayed).

No kernel and no app: the stored messages are built as the agent (or freeact) writes them, and the
replay's items are what the log's router is handed (the Pilot tests in ``test_tui_replay_live_events``
check the drawing itself).
"""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from freeact_tui.events import AgentError, CodeExecutionOutput, Compacted
from freeact_tui.store.compaction import CompactionInfo, CompactionTiming, compacted_view
from freeact_tui.store.event_record import EVENT_KEY, error_record
from freeact_tui.store.sessions import SessionStore
from freeact_tui.toolcalls import CODE_TOOL
from freeact_tui.tui.replay import LogNotice, UserPrompt, replay_history

TURN: list[ModelMessage] = [
    ModelRequest(parts=[UserPromptPart("hello")]),
    ModelResponse(parts=[TextPart("Hi.")]),
]


def test_a_turns_error_is_replayed_with_its_kind_and_stays_out_of_the_models_history() -> None:
    stored = [*TURN, error_record("repeat", "The same error came up twice.")]
    items = replay_history(stored)
    assert items[-1] == AgentError("The same error came up twice.", "repeat", agent_id="main")
    history, positions = compacted_view(stored)
    assert history == TURN and positions == [0, 1]


def test_a_withdrawn_turn_is_replayed_before_its_error() -> None:
    failed = ModelRequest(parts=[UserPromptPart("and then?")])
    stored = [*TURN, error_record("model", "HTTP 401", [failed])]
    items = replay_history(stored)
    assert items[-2:] == [UserPrompt("and then?"), AgentError("HTTP 401", "model", agent_id="main")]
    assert compacted_view(stored)[0] == TURN


def test_an_event_of_a_later_version_or_an_unknown_error_kind_is_read_safely() -> None:
    later = ModelRequest(parts=[], metadata={EVENT_KEY: {"kind": "something-new", "x": 1}})
    odd = error_record("quota", "Out of quota.")  # a kind this version does not know
    items = replay_history([*TURN, later, odd])
    assert items[-1] == AgentError("Out of quota.", "internal", agent_id="main")
    assert len(items) == 3  # the prompt, the answer, the error: the later kind shows nothing
    assert compacted_view([*TURN, later])[0] == TURN


def test_a_compaction_replays_its_timing_line_and_an_older_record_its_note_alone() -> None:
    def record(timing: CompactionTiming | None) -> ModelRequest:
        info = CompactionInfo(kept_from=1, replaced=2, tokens_before=900, tokens_after=300, timing=timing)
        return ModelRequest(
            parts=[UserPromptPart("[Context compacted] …\n\nThe summary.")], metadata=info.as_metadata()
        )

    items = replay_history([*TURN, record(CompactionTiming("manual", 1.25, 400, 30))])
    assert isinstance(items[-1], Compacted)
    assert (items[-1].reason, items[-1].seconds, items[-1].summary_input_tokens) == ("manual", 1.25, 400)
    older = replay_history([*TURN, record(None)])[-1]
    assert (
        isinstance(older, LogNotice) and older.title == "Context compacted" and "Compacted" not in older.text
    )


def test_images_are_replayed_from_our_metadata_and_from_freeacts_links(tmp_path: Path) -> None:
    ours = "<Figure>\n[image saved: /data/a.png]\n(1 image(s) attached below.)"
    theirs = "<Figure>\n![Image](/data/b.png)"
    for content, metadata, image in (
        (ours, {"outcome": "ok", "images": ["/data/a.png"]}, "/data/a.png"),
        (theirs, None, "/data/b.png"),  # freeact stores no metadata: the link in the text names it
    ):
        stored = [
            ModelRequest(parts=[UserPromptPart("plot")]),
            ModelResponse(parts=[ToolCallPart(CODE_TOOL, {"code": "plot()"}, tool_call_id="c1")]),
            ModelRequest(parts=[ToolReturnPart(CODE_TOOL, content, tool_call_id="c1", metadata=metadata)]),
        ]
        (output,) = [i for i in replay_history(stored) if isinstance(i, CodeExecutionOutput)]
        assert (output.text, output.images) == ("<Figure>", [Path(image)])


def test_a_session_whose_first_turn_failed_is_listed_by_what_the_user_asked(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    session = store.new_session()
    session.append(
        [error_record("model", "HTTP 401", [ModelRequest(parts=[UserPromptPart("what failed first")])])]
    )
    session.flush_meta()
    session.unlock()
    assert store.session(session.id).info().title == "what failed first"


def test_a_rewind_counts_the_conversations_messages_not_the_event_records(tmp_path: Path) -> None:
    """ "1 turn (2 messages) withdrawn" after a turn that failed: its error record is no message of it."""
    store = SessionStore(tmp_path / "sessions")
    session = store.new_session()
    session.append([*TURN, error_record("model", "Model API error (HTTP 500): boom.")])
    session.append([ModelRequest(parts=[UserPromptPart("again")]), ModelResponse(parts=[TextPart("Ok.")])])
    mark = session.rewind(2, "[Note: rewound]")
    assert (mark.withdrawn_turns, mark.withdrawn_messages) == (1, 2)
    assert "1 turn (2 messages) withdrawn" in mark.describe()
