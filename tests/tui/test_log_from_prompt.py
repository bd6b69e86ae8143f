"""The log from the prompt (issue 43): PageUp/PageDown (Home/End on an empty prompt) scroll it without
leaving the prompt; Ctrl+O keeps the reader's block at its row while every detail opens or closes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.widgets.blocks import ResponseBlock
from freeact_tui.tui.widgets.prompt import PromptInput, scrolls_log
from tests import helpers
from tests.helpers import send, until
from tests.scripted import Think, script

SIZE = (100, 30)
LONG = "\n\n".join(f"Paragraph {i}: " + "words " * 30 for i in range(20))
THOUGHT = "\n".join(f"thinking line {i}" for i in range(15))


@pytest.mark.parametrize(
    ("key", "lines", "text", "scrolls"),
    [
        ("pageup", 1, "", True),
        ("pageup", 1, "a draft", True),  # one line: nothing to page through in the prompt
        ("pagedown", 3, "a\nb\nc", False),  # the prompt's own pages
        ("home", 1, "", True),
        ("end", 1, "", True),
        ("home", 1, "a draft", False),  # with text, Home/End move the cursor
        ("end", 1, "x", False),
        ("up", 1, "", False),
        ("a", 1, "", False),
    ],
)
def test_which_keys_scroll_the_log(key: str, lines: int, text: str, scrolls: bool) -> None:
    assert scrolls_log(key, lines, text) is scrolls


executor = helpers.kernel


@pytest.fixture
def make_app(executor: KernelExecutor, tmp_path: Path) -> Callable[..., FreeactApp]:
    def make(s: object) -> FreeactApp:
        return helpers.make_app(
            s,
            tmp_path / "sessions",
            tmp_path,
            config={"subagent_pool_size": 0},
            executor=executor,  # type: ignore[arg-type]
        )

    return make


async def _turns(pilot: object, app: FreeactApp, count: int) -> None:
    for i in range(count):
        await send(pilot, f"question {i}")  # type: ignore[arg-type]
        await app.workers.wait_for_complete()
        await until(pilot, lambda: not app.main_screen.turn_running)  # type: ignore[arg-type]
    await until(
        pilot,
        lambda: all(
            b.region.height or not b.display for b in app.main_screen.conversation.query(ResponseBlock)
        ),
    )  # type: ignore[arg-type]


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_page_keys_scroll_the_log_from_the_prompt(make_app: Callable[..., FreeactApp]) -> None:
    app = make_app(script([LONG], [LONG]))
    async with app.run_test(size=SIZE) as pilot:
        await _turns(pilot, app, 2)
        log = app.main_screen.conversation
        prompt = app.main_screen.query_one(PromptInput)
        prompt.focus()
        await until(pilot, lambda: log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y)
        bottom = log.scroll_y
        await pilot.press("pageup")
        await pilot.pause()
        assert log.scroll_y < bottom and app.focused is prompt and not log.following
        await pilot.press("home")
        await pilot.pause()
        assert log.scroll_y == 0
        await pilot.press("pagedown")
        await pilot.pause()
        assert 0 < log.scroll_y
        await pilot.press("end")
        await until(pilot, lambda: log.scroll_y == log.max_scroll_y)
        assert log.following and app.focused is prompt
        prompt.load_text("draft")
        prompt.move_cursor((0, 5))
        await pilot.press("home")  # with text: the cursor, not the log
        assert prompt.cursor_location == (0, 0) and log.scroll_y == log.max_scroll_y


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_ctrl_o_keeps_the_block_in_view_at_its_row(make_app: Callable[..., FreeactApp]) -> None:
    app = make_app(script([Think(THOUGHT), LONG], [Think(THOUGHT), LONG], [Think(THOUGHT), LONG]))
    async with app.run_test(size=SIZE) as pilot:
        await _turns(pilot, app, 3)
        log = app.main_screen.conversation
        answers = list(log.query(ResponseBlock))
        target = answers[-1]
        log.release_anchor()
        log.scroll_to(y=target.virtual_region.y + 3, animate=False, immediate=True)
        await pilot.pause()
        row = target.virtual_region.y - round(log.scroll_y)
        for _ in range(2):  # open every detail above, then close them again
            await pilot.press("ctrl+o")
            await pilot.pause(0.3)
            assert target.virtual_region.y - round(log.scroll_y) == row
