"""#30: the approval dialog says when an action installs packages into the kernel environment, with
the installing command shown and its control characters made visible."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Label

from freeact_tui.events import ApprovalRequest, Decision
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.project.config import Config
from freeact_tui.toolcalls import CodeAction, ShellAction, ShellScript, ToolCall
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.approval import ApprovalScreen
from tests import helpers
from tests.scripted import Code, script

SIZE = (120, 40)


class DialogHost(App[None]):
    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__()
        self.request = request
        self.decision: Decision | None = None

    def on_mount(self) -> None:
        self.push_screen(ApprovalScreen(self.request), callback=self._done)

    def _done(self, decision: Decision | None) -> None:
        self.decision = decision


def _installs_text(screen: ApprovalScreen) -> str | None:
    found = screen.query("#approval-installs")
    return str(found.first(Label).render()) if found else None


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("call", "lines"),
    [
        (ShellAction("pip install pandas"), ["pip install pandas"]),
        (ShellAction("/work/venv/bin/python -m pip install -U numpy"), ["/work/venv/bin/python -m pip install -U numpy"]),
        (ShellAction("uv pip install 'requests<3'"), ["uv pip install 'requests<3'"]),
        (ShellScript("set -e\npip install rich\necho ok\nuv pip install httpx"), ["pip install rich", "uv pip install httpx"]),
        # a hidden escape sequence must not disguise what gets installed
        (ShellAction("pip install safe\x1b[2K\rpip install evil"), ["pip install safe␛[2K␍pip install evil"]),
    ],
)  # fmt: skip
async def test_the_dialog_says_an_action_installs_packages(call: ToolCall, lines: list[str]) -> None:
    app = DialogHost(ApprovalRequest(call, agent_id="main"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = _installs_text(app.screen)  # type: ignore[arg-type]
        assert text is not None
        assert text.splitlines() == [
            "⚠ Installs packages into the kernel environment:",
            *(f"  {li}" for li in lines),
        ]
        assert "\x1b" not in text and "\r" not in text
        await pilot.pause(ApprovalScreen.ARMING_SECONDS + 0.1)
        await pilot.press("y")  # the line changes nothing about deciding
        await pilot.pause()
    assert app.decision == Decision(True)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "call",
    [ShellAction("pip list"), ShellAction("pip download pandas"), ShellScript("echo pip install"), CodeAction("import pip")],
)  # fmt: skip
async def test_no_install_line_for_actions_that_install_nothing(call: ToolCall) -> None:
    app = DialogHost(ApprovalRequest(call, agent_id="main"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert _installs_text(app.screen) is None  # type: ignore[arg-type]


# -- in the app: the model's `!pip install` asks with the line, and rejecting installs nothing ----------


# the kernel: conftest.py's module-scoped `executor`
until = functools.partial(helpers.until, limit=20.0)


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_the_models_pip_install_is_shown_as_an_install(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    s = script([Code("!pip install freeact-tui-no-such-package")], ["Not installed."])
    config = Config(sessions_dir=tmp_path / "sessions", working_dir=tmp_path, subagent_pool_size=0)
    app = FreeactApp(config, model=s.model(), executor=executor)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.agent_ready)
        app.main_screen.prompt.load_text("install it")
        app.main_screen.prompt.focus()
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        text = _installs_text(app.screen)  # type: ignore[arg-type]
        assert text is not None and text.startswith("⚠ Installs packages into the kernel environment:")
        assert "pip install freeact-tui-no-such-package" in text
        await pilot.press("escape")  # rejected
        await until(pilot, lambda: not app.main_screen.turn_running)
