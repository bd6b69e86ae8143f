"""Where a reply's stream splits does not matter: generated replies, split at generated points.

A reply made of prose, code fences (``python``, ``bash``, unlabelled), tool-call tags written as text,
thinking tags and non-ASCII text is streamed once as one delta and once in pieces cut anywhere (inside a
fence marker, a tag, a multi-byte character's neighbourhood). Through the real turn loop, in every
protocol, both give the same events (but the chunking of ``ResponseChunk``), the same answer and the same
history; the chunks put together are the reply. Actions the reply leads to are refused, so no kernel runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from freeact_tui.agent.agent import Agent
from freeact_tui.events import AgentEvent, ApprovalRequest, ContextUpdate, ResponseChunk, UsageUpdate
from freeact_tui.permissions.rules import PermissionRules

PIECES = [
    "Here is the plan. ",
    "Größe: 42 — ok ✓\n",
    "```python\nprint(6 * 7)\n```\n",
    "```bash\nls -la\n```\n",
    "```\nplain block\n```\n",
    '<tool_call>{"name": "ipybox_execute_ipython_cell", "arguments": {"code": "x = 1"}}</tool_call>\n',
    "<think>thinking about it</think>",
    "The answer is 42.",
    "\n\n",
    "`inline` and ``double``",
]


def split_model(text: str, cuts: list[int]) -> FunctionModel:
    points = sorted({c for c in cuts if 0 < c < len(text)})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    done = {"first": False}

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        if done["first"]:  # after the reply: a plain answer (a refusal or a nudge asked again)
            yield "Done."
            return
        done["first"] = True
        for piece in pieces:
            yield piece

    return FunctionModel(stream_function=stream, model_name="splits")


def signature(events: list[AgentEvent]) -> list[tuple[str, Any]]:
    """The events but the streamed chunks (and gauges, which follow timings), ids and times left out."""
    out: list[tuple[str, Any]] = []
    for e in events:
        if isinstance(e, ResponseChunk | UsageUpdate | ContextUpdate):
            continue
        fields = {
            f.name: getattr(e, f.name)
            for f in dataclasses.fields(e)
            if f.name not in ("agent_id", "corr_id", "parent_corr_id") and not f.name.startswith("_")
        }
        if isinstance(e, ApprovalRequest):
            fields = {"subject": e.tool_call.subject, "kind": e.tool_call.kind}
        out.append((type(e).__name__, repr(sorted(fields.items()))))
    return out


async def play(
    text: str, cuts: list[int], protocol: str, tmp_path: Path
) -> tuple[list[AgentEvent], list[str]]:
    agent = Agent(
        split_model(text, cuts),
        sessions_dir=tmp_path / "sessions",
        working_dir=tmp_path,
        permissions=PermissionRules(None, defaults=False),
        enable_subagents=False,
        eager_kernel=False,
        action_protocol=protocol,
        max_model_requests=4,
    )
    events: list[AgentEvent] = []
    async with agent:
        async for event in agent.stream("go"):
            events.append(event)
            if isinstance(event, ApprovalRequest) and not event.decided:
                event.approve(False)
        answers = [m.text or "" for m in agent.history if isinstance(m, ModelResponse)]
    return events, answers


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    parts=st.lists(st.sampled_from(PIECES), min_size=1, max_size=6),
    cuts=st.lists(st.integers(1, 400), max_size=30),
    protocol=st.sampled_from(["tools", "text", "auto"]),
)
async def test_a_reply_split_anywhere_gives_the_same_events_and_history(
    tmp_path_factory: pytest.TempPathFactory, parts: list[str], cuts: list[int], protocol: str
) -> None:
    text = "".join(parts)
    whole, whole_answers = await play(text, [], protocol, tmp_path_factory.mktemp("whole"))
    split, split_answers = await play(text, cuts, protocol, tmp_path_factory.mktemp("split"))
    assert signature(split) == signature(whole), (protocol, parts, cuts)
    assert split_answers == whole_answers
    first = [e.content for e in split if isinstance(e, ResponseChunk)]
    assert "".join(first).startswith(text)  # the first reply's chunks put together are the reply
