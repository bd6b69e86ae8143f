"""#44 F5: the ids the model chose are not used as identities (kernel-free).

A model gave two calls of one reply the id ``c1``: the ACP client saw the second call's output on ``c1``
after ``c1`` had completed, and a later turn reusing ``c1`` started a second ``tool_call`` ``c1`` in the
same session. Now every call gets an id unique in the session when its reply comes (``CallIds``), and
ACP's ``TurnUpdates`` never starts a ``toolCallId`` the session has sent before. Generated id sequences
(repeats within a reply and across turns, empty ids, ids equal to an earlier renamed id) go through
both: each ``tool_call`` starts once and ends once, and each call's output goes to its own call.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)

from freeact_tui.acp.turn_updates import TurnUpdates
from freeact_tui.agent.turn.call_ids import CallIds
from freeact_tui.events import ApprovalRequest, CodeExecutionOutput, CodeExecutionOutputChunk, Decision
from freeact_tui.toolcalls import CodeAction

IDS = st.sampled_from(["c1", "c1", "c2", "", "c1~2", "c1#2", "call~2", "c1/1"])
REPLIES = st.lists(st.lists(IDS, min_size=1, max_size=4), min_size=1, max_size=4)  # the turns' replies


def reply(ids: list[str]) -> ModelResponse:
    return ModelResponse(
        parts=[TextPart("acting"), *(ToolCallPart("ipybox_execute_ipython_cell", {}, i) for i in ids)]
    )


def given_ids(turns: list[list[str]]) -> list[list[str]]:
    """The ids each turn's calls get, the history growing as a session's does."""
    call_ids, history, out = CallIds(), list[ModelMessage](), []
    for ids in turns:
        response = call_ids.fresh(reply(ids), history)
        assert isinstance(response.parts[0], TextPart)  # the other parts are kept, in order
        got = [p.tool_call_id for p in response.parts if isinstance(p, ToolCallPart)]
        history += [ModelRequest.user_text_prompt("go"), response]
        history.append(
            ModelRequest(parts=[ToolReturnPart("ipybox_execute_ipython_cell", "x", i) for i in got])
        )
        out.append(got)
    return out


@settings(max_examples=300, deadline=None)
@given(REPLIES)
def test_every_call_of_a_session_gets_an_id_of_its_own(turns: list[list[str]]) -> None:
    got = given_ids(turns)
    flat = [i for ids in got for i in ids]
    assert len(flat) == len(set(flat)) and all(flat)
    seen: set[str] = set()
    for wanted, ids in zip(turns, got, strict=True):
        for w, g in zip(wanted, ids, strict=True):
            if w and w not in seen:
                assert g == w  # a new id is the model's own
            seen.add(g)


def _turn_updates(turns: list[list[str]]) -> list[dict[str, Any]]:
    """Each turn's calls asked, allowed, streamed and ended through ACP's translator, which the session's
    turns share the id set of."""

    async def go() -> list[dict[str, Any]]:
        used: set[str] = set()
        seen: list[dict[str, Any]] = []
        for t, ids in enumerate(given_ids(turns)):
            turn = TurnUpdates(Path("/work"), used_ids=used)
            requests = [ApprovalRequest(CodeAction(f"print({t})"), corr_id=i) for i in ids]
            for request in requests:
                seen.extend(
                    u.model_dump(mode="json", by_alias=True, exclude_none=True) for u in turn.see(request)
                )
            for request in requests:
                request.resolve(Decision(True))
                seen.extend(
                    u.model_dump(mode="json", by_alias=True, exclude_none=True)
                    for u in turn.decided(request, Decision(True))
                )
            for request in requests:  # each call's output names its call: "out <its id>"
                for event in (
                    CodeExecutionOutputChunk(f"out {request.corr_id}", corr_id=request.corr_id),
                    CodeExecutionOutput(f"out {request.corr_id}", corr_id=request.corr_id),
                ):
                    seen.extend(
                        u.model_dump(mode="json", by_alias=True, exclude_none=True) for u in turn.see(event)
                    )
            seen.extend(
                u.model_dump(mode="json", by_alias=True, exclude_none=True) for u in turn.close_open("end")
            )
        return seen

    return asyncio.run(go())


@settings(max_examples=200, deadline=None)
@given(REPLIES)
def test_each_tool_call_starts_once_ends_once_and_carries_only_its_own_output(turns: list[list[str]]) -> None:
    updates = _turn_updates(turns)
    starts = [u["toolCallId"] for u in updates if u["sessionUpdate"] == "tool_call"]
    assert len(starts) == len(set(starts)) == sum(map(len, turns))
    for tool_call_id in starts:
        mine = [u for u in updates if u["toolCallId"] == tool_call_id]
        ends = [u for u in mine if u.get("status") in ("completed", "failed")]
        assert len(ends) == 1 and ends[0] is mine[-1] and ends[0]["status"] == "completed", mine
        texts = {
            c["content"]["text"] for u in mine for c in u.get("content", []) if c.get("type") == "content"
        }
        outputs = {m for t in texts for m in re.findall(r"out (\S+)", t)}
        assert outputs == {tool_call_id}, (tool_call_id, texts)  # its own output, and only its own
