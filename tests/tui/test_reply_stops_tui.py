"""#40 in the TUI: a reply cut at the token limit or by the provider's content filter is shown with a
notice under it, the text and title from the same row of ``agent/reply_stops.py`` the headless status
and the ACP stop reason are read from. The real app under Pilot, the fake OpenAI server as the model."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from freeact_tui.agent.reply_stops import REPLY_STOPS
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.project.config import Config
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.widgets.blocks import ErrorBlock, NoticeBlock
from freeact_tui.tui.widgets.prompt import PromptInput
from tests import helpers
from tests.fake_openai import FakeOpenAI, Reply

until = functools.partial(helpers.until, limit=30.0)


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("finish", sorted(REPLY_STOPS))
async def test_a_reply_cut_short_gets_a_notice_under_it(
    executor: KernelExecutor, tmp_path: Path, finish: str
) -> None:
    with FakeOpenAI() as server:
        server.script(Reply("The answer is", finish_reason=finish), Reply("Hello."))
        config = Config(
            sessions_dir=tmp_path / "sessions", working_dir=tmp_path, subagent_pool_size=0, base_url=server.url
        )
        app = FreeactApp(config, model="local-model", executor=executor)
        async with app.run_test(size=(160, 30)) as pilot:
            await until(pilot, lambda: app.agent_ready)

            def notices() -> list[NoticeBlock]:
                return [b for b in app.main_screen.query(NoticeBlock) if not isinstance(b, ErrorBlock)]

            async def ask(text: str, requests: int) -> None:
                prompt = app.main_screen.query_one(PromptInput)
                prompt.load_text(text)
                prompt.focus()
                await pilot.press("enter")
                await until(pilot, lambda: server.count >= requests)
                await until(pilot, lambda: app.agent is not None and not app.agent.busy)

            await ask("what is it?", 1)
            await until(pilot, lambda: any(b.text == REPLY_STOPS[finish].notice for b in notices()))
            block = next(b for b in notices() if b.text == REPLY_STOPS[finish].notice)
            assert str(block.border_title) == REPLY_STOPS[finish].title
            shown = len(notices())
            await ask("hello", 2)  # a whole answer: no notice
            await pilot.pause()
            assert server.count == 2
            assert len(notices()) == shown
