"""The class "a step the client never hears about", over every kind of event and generated fault sequences.

``TurnUpdates`` is the one place agent events become ACP updates. Two things hold it total:

- every kind of agent event is a row of ``EVENT_UPDATES`` (how it shows) or of ``NOT_SHOWN`` (why not),
  so a new kind of event is a decision, never silence;
- whatever the agent's calls go through (run, fail, refused by a rule or by the user, broken, unknown,
  guarded, cut by the reply cap, never answered, cancelled, a subagent that failed, shell parts), in any
  interleaving and cut anywhere by a cancel or an error, each call reaches the client as exactly one
  ``tool_call`` that ends exactly once, ``completed`` or ``failed``, and nothing changes its status after.
"""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui import events
from freeact_tui.acp.turn_updates import EVENT_UPDATES, NOT_SHOWN, TurnUpdates
from freeact_tui.events import (
    AgentError,
    AgentEvent,
    ApprovalRequest,
    Cancelled,
    CodeExecutionOutput,
    CodeExecutionOutputChunk,
    Decision,
    SubagentStatus,
    ToolOutput,
)
from freeact_tui.toolcalls import CodeAction, JsonToolCall, ShellAction, SubagentTask

TERMINAL = {"completed", "failed"}


def test_every_kind_of_agent_event_is_shown_or_said_why_not() -> None:
    kinds = {
        cls
        for _, cls in inspect.getmembers(events, inspect.isclass)
        if issubclass(cls, AgentEvent) and cls is not AgentEvent and cls.__module__ == events.__name__
    }
    assert not set(EVENT_UPDATES) & set(NOT_SHOWN)
    assert kinds - set(EVENT_UPDATES) - set(NOT_SHOWN) == set(), "a kind of event with no row"
    assert all(reason.strip() for reason in NOT_SHOWN.values())


FATES = (
    "ran",  # asked, allowed by the client, streams output, ends well
    "failed",  # asked, allowed, its output is an error
    "ruled",  # allowed by a rule before it is shown, ends well
    "refused_by_rule",  # refused by a deny rule before it is shown: no output follows
    "rejected",  # asked, rejected by the client: no output follows
    "broken",  # invalid JSON arguments, a missing argument, an unknown tool, a guard, the reply cap:
    #            never asked, only its error (the dispatcher reports every such end)
    "never_answered",  # asked, the client never answers: the turn ends (or is cancelled) around it
    "subagent_failed",  # a subagent task: allowed, its subagent fails, then its answer comes
    "parts",  # a code action with a shell part the client rejects; the cell still ends with output
    "silent_ok",  # a call never asked that ends well (a result with no request before it)
)


def _script(corr: str, fate: str) -> list[tuple[str, Any]]:
    """What the agent and the client do for one call, in order: ``("event", e)``, ``("decide", bool)``
    (the client answers the call's own request) or ``("decide_part", bool)``."""
    code = CodeAction("print(1)")
    match fate:
        case "ran" | "failed":
            failed = fate == "failed"
            return [
                ("ask", code),
                ("decide", True),
                ("event", CodeExecutionOutputChunk("1", corr_id=corr)),
                ("event", CodeExecutionOutput("boom" if failed else "1", is_error=failed, corr_id=corr)),
            ]
        case "ruled":
            return [("ruled", (code, True)), ("event", ToolOutput("ok", corr_id=corr))]
        case "refused_by_rule":
            return [("ruled", (code, False))]
        case "rejected":
            return [("ask", code), ("decide", False)]
        case "broken":
            return [("event", ToolOutput("Invalid JSON arguments", is_error=True, corr_id=corr))]
        case "never_answered":
            return [("ask", JsonToolCall("srv_tool", {"a": 1}))]
        case "subagent_failed":
            return [
                ("ask", SubagentTask("do it", 5)),
                ("decide", True),
                ("event", SubagentStatus("running", "do it", agent_id="sub-1", corr_id=corr)),
                ("event", SubagentStatus("failed", "do it", "boom", agent_id="sub-1", corr_id=corr)),
                ("event", ToolOutput("the subagent failed", is_error=True, corr_id=corr)),
            ]
        case "parts":
            return [
                ("ask", code),
                ("decide", True),
                ("ask_part", ShellAction("rm -rf x")),
                ("decide_part", False),
                ("event", CodeExecutionOutput("rejected part", corr_id=corr)),
            ]
    return [("event", ToolOutput("fine", corr_id=corr))]


def _run(
    fates: list[str], order: list[int], cut: int | None, cut_by: str
) -> tuple[list[dict[str, Any]], set[str]]:
    """The updates for the calls of ``fates`` interleaved by ``order`` (call indices), cut after ``cut``
    steps by a cancel or an error; then the turn ends (``close_open``), as the runner does."""

    async def go() -> tuple[list[dict[str, Any]], set[str]]:
        turn = TurnUpdates(Path("/work"))
        seen: list[dict[str, Any]] = []
        scripts = [_script(f"c{i}", fate) for i, fate in enumerate(fates)]
        requests: dict[tuple[int, str], ApprovalRequest] = {}
        touched: set[str] = set()

        def add(updates: list[Any]) -> None:
            seen.extend(u.model_dump(mode="json", by_alias=True, exclude_none=True) for u in updates)

        def step(i: int, what: str, arg: Any) -> None:
            corr = f"c{i}"
            touched.add(corr)
            if what in ("ask", "ask_part"):
                request = ApprovalRequest(arg, corr_id=corr)
                requests[(i, what)] = request
                add(turn.see(request))
            elif what == "ruled":
                request = ApprovalRequest(arg[0], corr_id=corr)
                request.resolve(Decision(arg[1], by_rule=True))
                add(turn.see(request))
            elif what in ("decide", "decide_part"):
                request = requests[(i, "ask" if what == "decide" else "ask_part")]
                request.resolve(Decision(arg))
                add(turn.decided(request, Decision(arg)))
            else:
                add(turn.see(arg))

        for n, i in enumerate(order):
            if cut is not None and n == cut:
                ended: AgentEvent = Cancelled() if cut_by == "cancel" else AgentError("limit", kind="limit")
                add(turn.see(ended))
                if cut_by == "cancel":
                    break  # the stream ends at a cancel; the client's late answers still arrive
            if scripts[i]:
                step(i, *scripts[i].pop(0))
        for i, script in enumerate(scripts):  # permission answers that come after the end
            for what, arg in script:
                if (
                    what in ("decide", "decide_part")
                    and (i, "ask" if what == "decide" else "ask_part") in requests
                ):
                    step(i, what, arg)
        add(turn.close_open("The turn ended before this call finished."))
        return seen, touched

    return asyncio.run(go())


@st.composite
def fault_sequences(draw: st.DrawFn) -> tuple[list[str], list[int], int | None, str]:
    fates = draw(st.lists(st.sampled_from(FATES), min_size=1, max_size=5))
    slots = [i for i, fate in enumerate(fates) for _ in _script(f"c{i}", fate)]
    order = draw(st.permutations(slots))
    cut = draw(st.none() | st.integers(0, len(order)))
    return fates, list(order), cut, draw(st.sampled_from(["cancel", "error"]))


@given(fault_sequences())
@settings(max_examples=300, deadline=None)
def test_every_step_reaches_the_client_as_one_tool_call_that_ends_once(
    case: tuple[list[str], list[int], int | None, str],
) -> None:
    fates, order, cut, cut_by = case
    updates, touched = _run(fates, order, cut, cut_by)
    calls = [u for u in updates if u.get("sessionUpdate") in ("tool_call", "tool_call_update")]
    ids = list(dict.fromkeys(u["toolCallId"] for u in calls))
    for tool_call_id in ids:
        mine = [u for u in calls if u["toolCallId"] == tool_call_id]
        assert mine[0]["sessionUpdate"] == "tool_call", mine  # shown before anything names it
        assert [u["sessionUpdate"] for u in mine].count("tool_call") == 1, mine
        statuses = [u["status"] for u in mine if "status" in u]
        ends = [s for s in statuses if s in TERMINAL]
        assert len(ends) == 1, (tool_call_id, statuses)  # ends exactly once
        assert statuses[-1] in TERMINAL, (tool_call_id, statuses)  # and nothing moves it after
    shown = {tool_call_id.split("/")[0].split("#")[0] for tool_call_id in ids}
    assert touched <= shown, (touched, shown)  # every call that did anything was shown


@given(st.lists(st.sampled_from(FATES), min_size=1, max_size=5))
@settings(max_examples=100, deadline=None)
def test_uncut_calls_end_as_their_fate(fates: list[str]) -> None:
    order = [i for i, fate in enumerate(fates) for _ in _script(f"c{i}", fate)]
    updates, _ = _run(fates, order, None, "cancel")
    for i, fate in enumerate(fates):
        statuses = [u["status"] for u in updates if u.get("toolCallId") == f"c{i}" and "status" in u]
        expected = "completed" if fate in ("ran", "ruled", "parts", "silent_ok") else "failed"
        assert [s for s in statuses if s in TERMINAL] == [expected], (fate, statuses)
