"""A resumed session is drawn exactly as the live log drew it (real kernel, real app under Pilot).

One scripted session runs live — the user's own ``!command``, thinking, text, a code action with
output, a tool call the model wrote as broken JSON (shown as its error alone), a note the agent put
before a prompt, a nudge — then a new app resumes it and its log must equal the live one, block for
block; the token counts and the context gauge come back too. A reply cut by quitting mid-stream is marked on resume.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from freeact_tui.store.prompt_record import CANCELLED_NOTE, CUT_KEY, PROMPT_KEY, USAGE_KEY
from freeact_tui.store.sessions import SessionStore
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.widgets.blocks import NoticeBlock, ResponseBlock
from freeact_tui.tui.widgets.context_gauge import ContextGauge
from tests import helpers
from tests.helpers import dialog, idle, log_rows, main, ready, resumed_rows, send, until
from tests.scripted import CODE_TOOL, Code, Script, Think, Wait

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]
executor = helpers.kernel
make_app = helpers.chat_app
SIZE = (120, 40)

SECOND = "What is 1234 * 5678? Run code."
NOTE = "[Note: the user undid the file changes of the last action (1 file(s) restored or removed).]"


@dataclass
class BrokenCall:
    """A tool call whose arguments are broken JSON (pydantic-ai stores them as ``INVALID_JSON``)."""

    raw: str
    call_id: str


class BrokenScript(Script):
    """The scripted model, with steps that are one broken tool call."""

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
        step = self.steps[len(self.requests)] if len(self.requests) < len(self.steps) else []
        broken = [item for item in step if isinstance(item, BrokenCall)]
        if not broken:
            async for item in super()._stream(messages, info):
                yield item
            return
        self.requests.append(list(messages))
        self.infos.append(info)
        for part, call in enumerate(broken):
            yield {part: DeltaToolCall(name=CODE_TOOL, json_args=call.raw, tool_call_id=call.call_id)}


def status_figures(app: FreeactApp) -> tuple[str, str]:
    """The status bar's token counts and context gauge, as shown."""
    bar = main(app).status_bar
    usage = str(bar.query_one("#status-usage").render())
    gauge = bar.query_one(ContextGauge)
    return usage, str(gauge.render())


async def test_a_resumed_session_is_drawn_as_the_live_log_drew_it(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    s = BrokenScript(
        [
            [Think("Six times seven, by code."), "Let me compute it.", Code("print(6 * 7)", call_id="c1")],
            [BrokenCall('{"code": "print(1)"', "c-broken")],  # never asked: only its error is shown
            ["The answer is 42."],
            ["The result of 1234 * 5678 is 7006652."],  # claims a result without code: nudged
            [Code("print(1234 * 5678)", call_id="c2")],
            ["1234 * 5678 = 7006652."],
        ]
    )
    app = make_app(s, {"action_protocol": "auto"})
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "!echo shell-said-hi")
        await until(pilot, lambda: "shell-said-hi" in "".join(helpers.outputs(app)), limit=60)
        await idle(pilot)
        await send(pilot, "What is six times seven?")
        await dialog(pilot)
        await pilot.press("y")
        await idle(pilot)
        assert app.agent is not None
        app.agent.checkpointing.notes.tell(NOTE)  # what /undo tells the model with the next message
        await send(pilot, SECOND)
        await dialog(pilot)
        await pilot.press("y")
        await idle(pilot)
        live = log_rows(app)
        live_figures = status_figures(app)
        session_id = app.agent.session_id

    # The live log is what this test is about: every kind of block, and nothing the user did not see.
    kinds = {row[0] for row in live}
    assert {
        "UserMessageBlock",
        "ThoughtBlock",
        "ResponseBlock",
        "ActionBlock",
        "ExecutionOutputBlock",
    } <= kinds
    assert "NoticeBlock" in kinds  # the nudge
    assert [r[3] for r in live if r[0] == "UserMessageBlock"] == [
        "!echo shell-said-hi",
        "What is six times seven?",
        SECOND,
    ]
    broken = [r for r in live if "c-broken" in r or "INVALID_JSON" in " ".join(r)]
    assert [
        (r[0], r[3].split(":")[0]) for r in broken
    ] == [  # a step the user hears about, once, as its error
        ("ToolOutputBlock", "Invalid JSON arguments for `ipybox_execute_ipython_cell`")
    ]
    assert "↑" in live_figures[0] and "↑0 ↓0" not in live_figures[0] and "ctx" in live_figures[1]
    sent = s.requests[3][-1].parts[-1].content  # what the model got: the note and the shell run
    assert isinstance(sent, str) and sent.startswith(NOTE) and sent.endswith(SECOND)
    assert "[I ran `echo shell-said-hi`" in str(s.requests[0][-1].parts[-1].content)

    resumed = make_app(Script([["unused"]]), {"action_protocol": "auto"}, session_id=session_id)
    async with resumed.run_test(size=SIZE) as pilot:
        await ready(pilot, limit=30)
        await pilot.pause()
        assert log_rows(resumed) == live
        assert status_figures(resumed) == live_figures
        await send(pilot, "!echo after-resume")  # its output goes under it, not beside the replayed run's
        await until(pilot, lambda: "after-resume" in "".join(helpers.outputs(resumed)), limit=60)
        await idle(pilot)
        assert log_rows(resumed)[-2:] == [
            ("UserMessageBlock", "main", "", "!echo after-resume"),
            ("ExecutionOutputBlock", "main", "user-shell", "after-resume", "False", "previews=0"),
        ]

    info = SessionStore(tmp_path / "sessions").session(session_id).info()
    assert info.title == "What is six times seven?"  # the session's title is the user's words too
    lines = [
        json.loads(line)
        for line in (tmp_path / "sessions" / session_id / "main.jsonl").read_text().splitlines()
    ]
    metadata = [line["message"].get("metadata") or {} for line in lines]
    first = str(s.requests[0][-1].parts[-1].content)
    assert [m[PROMPT_KEY]["added"] for m in metadata if PROMPT_KEY in m] == [
        len(first) - len("What is six times seven?"),
        len(sent) - len(SECOND),
    ]
    assert all(
        USAGE_KEY in m
        for line, m in zip(lines, metadata, strict=True)
        if line["message"]["kind"] == "response"
    )


async def test_a_reply_cut_by_quitting_mid_stream_is_marked_on_resume(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    held = asyncio.Event()  # never set: the reply is still streaming when the user quits
    app = make_app(Script([["The first half of a long ans", Wait(held), "wer."]]))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "Explain it at length.")
        await until(pilot, lambda: "The first half" in "".join(helpers.texts(app, ResponseBlock)), limit=30)
        assert not main(app).conversation.query(NoticeBlock)  # live: no mark before the quit
        assert app.agent is not None
        session_id = app.agent.session_id
        await app.action_quit()
    stored = (tmp_path / "sessions" / session_id / "main.jsonl").read_text()
    assert CUT_KEY in stored

    rows = await resumed_rows(make_app, session_id)
    assert [r[0] for r in rows] == ["UserMessageBlock", "ResponseBlock", "NoticeBlock"]
    assert rows[1][3] == "The first half of a long ans"
    assert rows[2][3] == "Cancelled (model)."  # as a stream cut by Esc is marked live


async def test_a_session_written_before_the_records_hides_what_live_never_showed(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    """No prompt, cut or usage records (an older session, or freeact's): the agent's own text is still
    taken off, a broken call still shown as its error alone, a cancelled request still marked."""
    session = SessionStore(tmp_path / "sessions").new_session()
    shell = "[I ran `ls` in the kernel's shell; its output:]\n```\nnotes.txt\n```"
    session.append(
        [
            ModelRequest(parts=[UserPromptPart(f"{NOTE}\n\n{shell}\n\nWhat is in notes.txt?")]),
            ModelResponse(parts=[ToolCallPart(CODE_TOOL, '{"code": "print(open(', tool_call_id="c-broken")]),
            ModelRequest(
                parts=[ToolReturnPart(CODE_TOOL, "Invalid JSON arguments", tool_call_id="c-broken")]
            ),
            ModelResponse(parts=[TextPart("It lists the groceries.")]),
            ModelRequest(parts=[UserPromptPart("And then?")]),
            ModelResponse(parts=[TextPart(CANCELLED_NOTE)]),  # the user pressed Esc before any text
        ]
    )
    session.flush_meta()
    session.unlock()
    assert await resumed_rows(make_app, session.id) == [
        ("UserMessageBlock", "main", "", "!ls"),
        ("ExecutionOutputBlock", "main", "user-shell", "notes.txt", "False", "previews=0"),
        ("UserMessageBlock", "main", "", "What is in notes.txt?"),
        ("ToolOutputBlock", "main", "c-broken", "Invalid JSON arguments"),  # as live: its error, never asked
        ("ResponseBlock", "main", "", "It lists the groceries."),
        ("UserMessageBlock", "main", "", "And then?"),
        ("NoticeBlock", "main", "", "Cancelled (model).", "Turn cancelled"),
    ]


async def test_a_switch_to_text_actions_is_replayed_as_the_notice_live_showed(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    s = Script([['<tools>{"name": "python"}</tools>\n```python\nprint(2 ** 10)\n```'], ["It is 1024."]])
    app = make_app(s, {"action_protocol": "auto"})
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "two to the tenth")
        await dialog(pilot)
        await pilot.press("y")
        await idle(pilot)
        live = log_rows(app)
        assert app.agent is not None
        session_id = app.agent.session_id
    notices = [r for r in live if r[0] == "NoticeBlock"]
    assert len(notices) == 1 and notices[0][3].startswith("Switched to text actions")
    assert [r[3] for r in live if r[0] == "UserMessageBlock"] == ["two to the tenth"]

    assert await resumed_rows(make_app, session_id, {"action_protocol": "auto"}) == live


async def test_a_prompt_with_attached_files_is_replayed_as_typed(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("buy milk\n")
    s = Script([["You need milk."]])
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "What does @notes.txt say?")
        await idle(pilot)
        live = log_rows(app)
        assert app.agent is not None
        session_id = app.agent.session_id
    assert "buy milk" in str(s.requests[0][-1].parts[-1].content)  # the model got the file
    assert [r[3] for r in live if r[0] == "UserMessageBlock"] == ["What does @notes.txt say?"]

    assert await resumed_rows(make_app, session_id) == live
