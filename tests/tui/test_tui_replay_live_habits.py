"""What the live log shows and a resumed one showed otherwise (issue 43), under Pilot with a real kernel:
a rejection's reason, a cancelled cell, the undo notice. Each session runs live, then a new app resumes it
and its log must equal the live one block for block."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from freeact_tui.tui.app import FreeactApp
from tests import helpers
from tests.helpers import dialog, idle, log_rows, resumed_rows, send, session_lines, until
from tests.scripted import Call, Code, Script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]
executor = helpers.kernel
make_app = helpers.chat_app
SIZE = (120, 40)


async def test_a_rejection_with_a_reason_and_a_cancelled_cell_replay_as_drawn_live(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    s = Script(
        [
            [Code("print(2 ** 0.5)", call_id="c-sqrt")],
            ["Then: math.sqrt(2) is about 1.414."],
            [Code("import time\nprint('started', flush=True)\ntime.sleep(60)", call_id="c-slow")],
        ]
    )
    config: dict[str, object] = {"action_protocol": "tools"}
    app = make_app(s, config)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "square root of two")
        await dialog(pilot)
        await pilot.press("n")
        await pilot.pause()
        for key in "use math instead":
            await pilot.press("space" if key == " " else key)
        await pilot.press("enter")
        await idle(pilot)
        await send(pilot, "now sleep")
        await dialog(pilot)
        await pilot.press("y")
        await until(
            pilot,
            lambda: any(r[0] == "ExecutionOutputBlock" and "started" in r[3] for r in log_rows(app)),
            30,
        )
        await pilot.press("escape")
        await idle(pilot)
        live = log_rows(app)
        assert app.agent is not None
        session_id = app.agent.session_id

    actions = [r for r in live if r[0] == "ActionBlock"]
    assert actions[0][4] == "rejected · you said: use math instead"
    assert await resumed_rows(make_app, session_id, config) == live
    # The model was told what the cancelled cell printed before it was interrupted.
    returns = [
        part
        for line in session_lines(tmp_path, session_id)
        for part in line["message"].get("parts", [])
        if part.get("tool_call_id") == "c-slow" and part.get("part_kind") == "tool-return"
    ]
    assert [r["content"] for r in returns] == ["started\nInterrupted by user."]


async def test_the_undo_notice_replays_where_it_was_shown(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    from freeact_tui.tui.screens.undo import UndoScreen

    target = tmp_path / "a.txt"
    target.write_text("original\n")
    s = Script(
        [
            [Code(f"open({str(target)!r}, 'w').write('changed\\n')", call_id="c-write")],
            ["Changed it."],
            ["Fine."],
        ]
    )
    config: dict[str, object] = {"action_protocol": "tools", "skip_permissions": True}
    app = make_app(s, config)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "change a.txt")
        await idle(pilot)
        await send(pilot, "/undo")
        await until(pilot, lambda: isinstance(app.screen, UndoScreen), 20)
        await pilot.press("y")
        await until(pilot, lambda: any(r[0] == "NoticeBlock" and r[4] == "Undo" for r in log_rows(app)), 20)
        await send(pilot, "thanks")
        await idle(pilot)
        live = log_rows(app)
        assert app.agent is not None
        session_id = app.agent.session_id
    assert target.read_text() == "original\n"
    assert [r[4] for r in live if r[0] == "NoticeBlock"] == ["Undo"]
    assert await resumed_rows(make_app, session_id, config) == live


def usage_shown(app: FreeactApp) -> tuple[str, tuple[int, int, int, float | None]]:
    """The status bar's token counts and the totals ``/cost`` reports (the agent's meter)."""
    assert app.agent is not None
    u = app.agent.usage
    return str(helpers.main(app).status_bar.query_one("#status-usage").render()), (
        u.input_tokens,
        u.output_tokens,
        u.requests,
        u.cost_usd,
    )


async def test_the_tokens_of_a_turn_with_a_subagent_are_the_same_live_and_resumed(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    s = Script(
        [
            [Call("subagent_task", {"prompt": "compute three", "max_turns": 3}, call_id="t1")],
            [Code("print(1 + 2)", call_id="s1")],  # the subagent's action
            ["The subagent says 3."],  # the subagent's answer
            ["Delegated: 3."],  # the parent's answer
        ]
    )
    config: dict[str, object] = {"action_protocol": "tools"}
    app = make_app(s, config)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "delegate")
        for _ in range(2):  # the delegation, then the subagent's action
            await dialog(pilot)
            await pilot.press("y")
            await pilot.pause()
        await idle(pilot)
        live = usage_shown(app)
        assert app.agent is not None
        session_id = app.agent.session_id

    assert len(s.requests) == 4 and live[1][2] == 4  # four model requests, the subagent's two included
    resumed = make_app(Script([["unused"]]), config, session_id=session_id)
    async with resumed.run_test(size=SIZE) as pilot:
        await helpers.ready(pilot, limit=30)
        await pilot.pause()
        assert usage_shown(resumed) == live
