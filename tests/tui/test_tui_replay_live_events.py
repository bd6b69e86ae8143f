"""The last things a resumed log drew differently from the live one (real kernel, real app under Pilot).

Each test runs a scripted session live, then resumes it in a new app whose log must equal the live
one block for block, with what the blocks show besides their text: the links and previews under an
output, the title of an error, the status of an action approved by a saved rule.

- a tool-call session: code that plots (an image link and a preview), the same code again approved by
  the rule the user saved, an output over the inline limit (whole, with where it is saved), and a
  kernel that dies (an error block); an image deleted since is said to be gone instead of a broken
  preview;
- a text-action session: code blocks approved by the user and then by the saved rule, ``/compact``
  (the timing line of its marker), and a model API error (the turn the user saw, and its error,
  though the model's history drops the turn).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic_ai.exceptions import ModelHTTPError
from textual.pilot import Pilot
from textual.widgets import Input

from freeact_tui.store.event_record import EVENT_KEY
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.approval import ApprovalScreen
from tests import helpers
from tests.helpers import dialog, idle, log_rows, ready, resumed_rows, send, session_lines, until
from tests.scripted import Code, Fail, Script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]
executor = helpers.kernel
make_app = helpers.chat_app
SIZE = (120, 40)

PLOT = (
    "import matplotlib\nmatplotlib.use('module://matplotlib_inline.backend_inline')\n"
    "import matplotlib.pyplot as plt\nplt.figure(figsize=(1, 1)); plt.plot([0, 1]); plt.show()"
)
BLOCK = "```python\nprint(6 * 7)\n```"


async def always(pilot: Pilot[None], app: FreeactApp) -> str:
    """Approve the action in the dialog with "always allow" and its suggested pattern; the pattern."""
    await dialog(pilot)
    await pilot.press("a")
    screen = app.screen
    assert isinstance(screen, ApprovalScreen)
    pattern = screen.query_one("#approval-pattern", Input).value
    await pilot.press("enter")
    return pattern


async def test_images_rule_approvals_and_a_dead_kernel_replay_as_drawn_live(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    s = Script(
        [
            [Code(PLOT, call_id="c-plot")],
            [Code(PLOT, call_id="c-again")],  # approved by the rule saved on the first
            ["Two plots."],
            # over the inline limit: whole in the log; it writes a file too, so the rule saved on the plot
            # (code that only computes, #42) does not cover it and it is asked
            [Code("open('y.txt', 'w').write('y')\nprint('y' * 5000)", call_id="c-big")],
            ["Lots of y."],
            [Code("import os\nos._exit(1)", call_id="c-die")],
        ]
    )
    config: dict[str, object] = {"action_protocol": "tools", "tool_result_inline_max_bytes": 2000}
    app = make_app(s, config)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "Plot a line, twice.")
        await always(pilot, app)
        await idle(pilot)
        await send(pilot, "Print a lot.")
        await dialog(pilot)
        await pilot.press("y")
        await idle(pilot)
        await send(pilot, "Now exit the kernel.")
        await dialog(pilot)
        await pilot.press("y")
        await idle(pilot)
        live = log_rows(app)
        assert app.agent is not None
        session_id = app.agent.session_id

    # The live log is what this test is about: two images with previews, a rule's approval, the error.
    actions = [r for r in live if r[0] == "ActionBlock"]
    assert [a[4] for a in actions][:2] == [
        f"approved · always rule: {actions[0][4].split(': ', 1)[-1]}",
        "auto-approved by rule",
    ]
    outputs = [r for r in live if r[0] == "ExecutionOutputBlock" and r[2] in ("c-plot", "c-again")]
    assert all(o[5].startswith("image: ") and o[-1] == "previews=1" for o in outputs), outputs
    (big,) = [r for r in live if r[0] == "ExecutionOutputBlock" and r[2] == "c-big"]
    assert big[3] == "y" * 5000 and big[5].startswith("Over the inline limit") and "tool-results" in big[5]
    errors = [r for r in live if r[0] == "ErrorBlock"]
    assert len(errors) == 1 and errors[0][4] == "Kernel error" and "kernel died" in errors[0][3]

    assert await resumed_rows(make_app, session_id, config) == live

    gone = Path(outputs[0][5].removeprefix("image: "))
    await asyncio.to_thread(
        gone.unlink
    )  # the image of the first output is deleted: its block says so, with no preview
    expected = [
        (*r[:5], f"image: {gone} (the file is gone)", "previews=0") if r[:3] == outputs[0][:3] else r
        for r in live
    ]
    assert await resumed_rows(make_app, session_id, config) == expected


async def test_text_actions_by_rule_a_compaction_and_a_model_error_replay_as_drawn_live(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    s = Script(
        [
            [BLOCK],
            ["It is 42."],
            [BLOCK],  # approved by the rule saved on the first
            ["42 again."],
            ["Summary: the user computed 6 * 7 = 42 twice."],  # the summariser's request (/compact)
            ["Once more:\n" + BLOCK],
            [Fail(ModelHTTPError(401, "scripted", body={"error": "bad key"}))],
        ]
    )
    config: dict[str, object] = {"action_protocol": "text"}
    app = make_app(s, config)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "six times seven")
        pattern = await always(pilot, app)
        await idle(pilot)
        await send(pilot, "again")
        await idle(pilot)
        await send(pilot, "/compact")
        await until(
            pilot, lambda: any(r[4] == "Context compacted" for r in log_rows(app) if r[0] == "NoticeBlock")
        )
        await idle(pilot)
        await send(pilot, "and once more")
        await idle(pilot)
        live = log_rows(app)
        assert app.agent is not None
        session_id = app.agent.session_id
        history = len(app.agent.history)

    actions = [r for r in live if r[0] == "ActionBlock"]
    assert [a[4] for a in actions] == [
        f"approved · always rule: {pattern}",
        "auto-approved by rule",
        "auto-approved by rule",
    ]
    (compacted,) = [r for r in live if r[0] == "NoticeBlock" and r[4] == "Context compacted"]
    assert compacted[3].startswith("Compacted by /compact in ") and "summary request:" in compacted[3]
    assert live[-1][:3] == ("ErrorBlock", "main", "") and live[-1][4] == "Model error"
    assert "401" in live[-1][3]
    assert [r[3] for r in live if r[0] == "UserMessageBlock"] == ["six times seven", "again", "and once more"]

    assert await resumed_rows(make_app, session_id, config) == live

    # The model's history dropped the failed turn; the file keeps it in an event record only.
    lines = session_lines(tmp_path, session_id)
    records = [line for line in lines if EVENT_KEY in (line["message"].get("metadata") or {})]
    assert len(records) == 1 and records[0]["message"]["parts"] == []
    resumed = make_app(Script([["unused"]]), config, session_id=session_id)
    async with resumed.run_test(size=SIZE) as pilot:
        await ready(pilot, limit=30)
        assert resumed.agent is not None and len(resumed.agent.history) == history
