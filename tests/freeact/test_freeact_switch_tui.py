"""freeact's skill habits in the terminal: ``/<skill-name> args`` sends the skill as freeact does
(``<skill name="…">args</skill>``), and the ``@`` picker and the command palette offer the skills."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelRequest, UserPromptPart
from textual.pilot import Pilot
from textual.widgets import OptionList

from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.project.config import Config
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.file_picker import FilePicker
from freeact_tui.tui.screens.main import MainScreen
from freeact_tui.tui.widgets.prompt import PromptInput
from tests import helpers
from tests.scripted import Script, script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]

SIZE = (120, 40)


executor = helpers.kernel


@pytest.fixture
def make_app(executor: KernelExecutor, tmp_path: Path) -> Callable[[Script], FreeactApp]:
    (tmp_path / ".freeact").mkdir()  # a freeact project: the bundled skills go to .freeact/skills

    def make(s: Script) -> FreeactApp:
        config = Config(sessions_dir=tmp_path / "sessions", working_dir=tmp_path, subagent_pool_size=0)
        return FreeactApp(config, model=s.model(), executor=executor)

    return make


async def until(pilot: Pilot[None], condition: Callable[[], bool], limit: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.02)


def prompts_sent(s: Script) -> list[str]:
    return [
        str(p.content)
        for m in s.requests[-1]
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    ]


async def test_slash_skill_sends_the_skill_as_freeact_does(make_app: Callable[[Script], FreeactApp]) -> None:
    s = script(["Here is a plan."], ["ok"])
    app = make_app(s)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.agent_ready)
        prompt = app.main_screen.query_one(PromptInput)
        prompt.load_text("/task-planning plan my trip")
        prompt.focus()
        await pilot.press("enter")
        await until(pilot, lambda: bool(s.requests) and not app.main_screen.turn_running)
        assert prompts_sent(s)[-1] == '<skill name="task-planning">plan my trip</skill>'
        # An unknown name is still an unknown command (nothing sent).
        prompt.load_text("/no-such-skill x")
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert len(s.requests) == 1 and prompt.text == "/no-such-skill x"


async def test_the_at_picker_lists_skills_after_a_slash(make_app: Callable[[Script], FreeactApp]) -> None:
    app = make_app(script(["unused"]))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.agent_ready)
        prompt = app.main_screen.query_one(PromptInput)
        prompt.load_text("plan my trip ")
        prompt.move_cursor(prompt.document.end)
        prompt.focus()
        await pilot.press("@")
        await until(pilot, lambda: isinstance(app.screen, FilePicker))
        picker = app.screen
        assert isinstance(picker, FilePicker)
        await pilot.press(*"/plan")
        await until(pilot, lambda: picker.shown == "/plan")
        options = picker.query_one(OptionList)
        assert [options.get_option_at_index(i).id for i in range(options.option_count)] == ["/task-planning"]
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert prompt.text == "/task-planning plan my trip"


async def test_the_palette_offers_skills(make_app: Callable[[Script], FreeactApp]) -> None:
    from freeact_tui.tui.commands import SlashCommandProvider

    app = make_app(script(["unused"]))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.agent_ready)
        provider = SlashCommandProvider(app.main_screen)
        offered = dict(provider._candidates("task"))
        assert offered["/task-planning"].startswith("Skill: When asked to plan")
        await app.run_action("slash('/task-planning')")
        assert app.main_screen.query_one(PromptInput).text == "/task-planning "


def _clipboard_program(directory: Path, name: str, out: Path) -> None:
    """An executable named like an OS clipboard program that keeps what it is given (none is installed here)."""
    program = directory / name
    program.write_text(f"#!/bin/sh\nexec /bin/cat > {out}\n")
    program.chmod(0o755)


async def test_os_clipboard_programs_in_freeacts_order() -> None:  # async: the module runs on one loop
    from freeact_tui.tui.clipboard import clipboard_commands

    assert clipboard_commands("darwin", {}) == [("pbcopy",)]
    assert [c[0] for c in clipboard_commands("linux", {"WAYLAND_DISPLAY": "wayland-0"})] == [
        "wl-copy",
        "xclip",
        "xsel",
    ]
    assert [c[0] for c in clipboard_commands("linux", {"DISPLAY": ":0"})] == ["xclip", "xsel", "wl-copy"]


async def test_copy_falls_back_to_the_os_clipboard(
    make_app: Callable[[Script], FreeactApp], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from freeact_tui.tui.clipboard import copy_to_os_clipboard

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("XDG_SESSION_TYPE", raising=False)
    assert copy_to_os_clipboard("nothing to take it") is None  # none installed: OSC 52 alone
    copied = tmp_path / "copied.txt"
    _clipboard_program(bin_dir, "xsel", copied)
    assert copy_to_os_clipboard("first") == "xsel" and copied.read_text() == "first"

    app = make_app(script(["unused"]))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.agent_ready)
        app.copy_to_clipboard("the session id")
        await until(pilot, lambda: copied.read_text() == "the session id")
        assert app.clipboard == "the session id"  # OSC 52 was sent too
