"""The text protocol in the app (Pilot, real kernel): the switch is shown, blocks go through the dialog."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from freeact_tui.events import UsageUpdate
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.widgets.blocks import NoticeBlock, ResponseBlock
from tests import helpers
from tests.helpers import actions, dialog, main, outputs, send, texts, until
from tests.scripted import script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]
executor = helpers.kernel
make_app = helpers.chat_app
SIZE = (120, 40)


async def test_auto_switch_is_shown_and_a_code_block_is_approved_in_the_dialog(
    make_app: Callable[..., FreeactApp],
) -> None:
    s = script(["I would run:\n\n```python\nprint('from a block')\n```\n"], ["It printed **from a block**."])
    app = make_app(s, {"action_protocol": "auto"})
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "print something")
        screen = await dialog(pilot)
        assert "print('from a block')" in str(screen.query_one("#approval-body").render())
        notices = [b for b in main(app).conversation.query(NoticeBlock) if b.border_title == "Text actions"]
        assert len(notices) == 1 and "code block instead of calling the tool" in notices[0].text
        await pilot.press("y")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert outputs(app) == ["from a block"]
        assert actions(app)[0].status == "approved"
        await until(pilot, lambda: "It printed" in texts(app, ResponseBlock)[-1])
        usage = str(main(app).status_bar.query_one("#status-usage").render())
        assert usage.startswith("↑") and "tokens" in usage  # FunctionModel reports usage: no estimate mark
        main(app).status_bar.set_usage(UsageUpdate(1200, 300, 2, estimated=True))  # as from llama.cpp
        await pilot.pause()
        assert str(main(app).status_bar.query_one("#status-usage").render()) == "~↑1.2k ↓300 tokens"


async def test_a_nudge_is_shown_in_the_log_between_the_claim_and_the_action(
    make_app: Callable[..., FreeactApp],
) -> None:
    from tests.scripted import Code

    s = script(["The result is 7006652."], [Code("print(1234 * 5678)")], ["It is 7006652."])
    app = make_app(s, {"action_protocol": "auto"})
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "1234 * 5678?")
        await dialog(pilot)
        await pilot.press("y")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert outputs(app) == ["7006652"]
        blocks = list(main(app).conversation.query(NoticeBlock))
        nudges = [b for b in blocks if b.border_title == "Nudged the model"]
        assert len(nudges) == 1
        assert nudges[0].text == (
            "The reply claims results no action produced. Told the model: “You did not run any code for my "
            "last request, so what your reply states did not happen. Call `ipybox_execute_ipython_cell` "
            "now with the code.”"
        )
        assert texts(app, ResponseBlock) == ["The result is 7006652.", "It is 7006652."]
