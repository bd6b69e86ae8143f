"""#40 (hostile tester): "an event kind a front end does not handle". ACP streamed a nudged reply as part
of the answer and glued the next reply to it ("The answer is 91234.You did not run any code…"): no
``Nudge`` reached ``freeact_tui/acp/``. Every agent event class has a mapping in every front end (ACP,
headless, TUI), and over ACP a nudged reply ends with a separator and a note (kernel-free)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import freeact_tui.events as events
from freeact_tui.acp.turn_updates import EVENT_UPDATES, NOT_SHOWN, TurnUpdates
from freeact_tui.cli.run import HEADLESS_EVENTS, RunRecord
from freeact_tui.events import AgentEvent, Nudge, Response, ResponseChunk
from freeact_tui.tui.screens import event_router
from freeact_tui.tui.screens.event_router import TUI_EVENTS

EVENT_CLASSES = sorted(
    name
    for name, value in vars(events).items()
    if inspect.isclass(value) and issubclass(value, AgentEvent) and value is not AgentEvent
)

ACP_EVENTS = {kind.__name__: "shown" for kind in EVENT_UPDATES} | {
    kind.__name__: why for kind, why in NOT_SHOWN.items()
}
"""ACP's rows by class name: ``EVENT_UPDATES`` (how it shows) and ``NOT_SHOWN`` (why not)."""


@pytest.mark.parametrize(
    ("front_end", "table"), [("acp", ACP_EVENTS), ("headless", HEADLESS_EVENTS), ("tui", TUI_EVENTS)]
)
def test_every_event_class_has_a_mapping_in_every_front_end(front_end: str, table: dict[str, str]) -> None:
    assert sorted(table) == EVENT_CLASSES, front_end
    assert all(how.strip() for how in table.values())


def test_the_tui_router_matches_every_event_it_says_it_shows() -> None:
    source = inspect.getsource(event_router.EventRouter)
    missing = [name for name in EVENT_CLASSES if f"{name}(" not in source and f"{name})" not in source]
    assert missing == []


def acp_text(seen: list[AgentEvent]) -> str:
    turn = TurnUpdates(Path.cwd())
    text = ""
    for event in seen:
        for update in turn.see(event):
            content = getattr(update, "content", None)
            if getattr(update, "session_update", "") == "agent_message_chunk" and content is not None:
                text += content.text
    return text


def test_over_acp_a_nudged_reply_is_marked_not_the_answer() -> None:
    text = acp_text(
        [
            ResponseChunk("The answer is 91234."),
            Response("The answer is 91234."),
            Nudge("the reply states a result that no code computed", "You did not run any code…"),
            ResponseChunk("It is 42."),
            Response("It is 42."),
        ]
    )
    first, _, rest = text.partition("It is 42.")
    assert first.startswith("The answer is 91234.\n\n---\n") and "Not the answer" in first, text
    assert rest == ""


def test_headless_leaves_a_nudged_reply_out_of_the_answer() -> None:
    record = RunRecord("s")
    for event in [Response("The answer is 91234."), Nudge("why", "told")]:
        record.see(event)
    assert record.answer == "" and record.status == "error"
    record.see(Response("It is 42."))
    assert record.answer == "It is 42." and record.status == "answered"
