"""`!command` in the prompt: the user's own shell command runs at once in the kernel, with no
approval; its output is shown and put before the next prompt the model gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from freeact_tui.project.config import Config
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.user_shell import shell_command
from freeact_tui.tui.widgets.blocks import UserMessageBlock
from freeact_tui.tui.widgets.blocks.output import ExecutionOutputBlock
from tests.helpers import own_kernel_until as until
from tests.scripted import Script


def test_which_prompts_are_shell_commands() -> None:
    assert shell_command("!ls -la") == "ls -la"
    assert shell_command("  ! git status ") == "git status"
    assert shell_command("!!not a command") is None  # sent to the model as "!not a command"
    assert shell_command("!") is None and shell_command("ls") is None


@pytest.mark.kernel
async def test_bang_runs_without_approval_and_the_model_sees_it(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("one\ntwo\nthree\n")
    s = Script([["You saw three lines."]])
    config = Config(sessions_dir=tmp_path / "sessions", working_dir=tmp_path, subagent_pool_size=0)
    app = FreeactApp(config, model=s.model())  # no rule allows shell: a model's command would be asked
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.agent_ready)
        screen = app.main_screen
        screen.prompt.text = "!wc -l < data.txt && echo done-$((6*7))"
        await pilot.press("enter")
        await until(
            pilot, lambda: not screen.turn_running and screen.conversation.query(ExecutionOutputBlock)
        )
        out = screen.conversation.query(ExecutionOutputBlock).last()
        await until(pilot, lambda: "done-42" in out.text)
        assert out.text.split() == ["3", "done-42"]
        assert app.screen is screen  # no approval dialog over it
        assert [b.text for b in screen.conversation.query(UserMessageBlock)] == [
            "!wc -l < data.txt && echo done-$((6*7))"
        ]
        assert s.requests == []  # the model was not asked

        screen.prompt.text = "how many lines?"
        await pilot.press("enter")
        await until(pilot, lambda: not screen.turn_running and len(s.requests) == 1)
        await app.action_quit()
    sent = str(s.requests[0][-1])
    assert "I ran `wc -l < data.txt && echo done-$((6*7))` in the kernel's shell" in sent
    assert "done-42" in sent and "how many lines?" in sent
