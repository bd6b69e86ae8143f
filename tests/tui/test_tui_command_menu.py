"""The ``/`` menu above the prompt and Tab completion, in the real app under Pilot (issue #33).

The menu lists every slash command of the registry and the skills, filters as the user types,
Up/Down move, Enter runs, Tab completes, Esc closes with the text kept. Tab completes a command name,
an ``@`` path from the picker's file index and a session id after ``/resume``; with nothing to complete
it moves the focus as before.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from freeact_tui.store.sessions import SessionStore
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.commands import COMMANDS
from freeact_tui.tui.screens.help import HelpScreen
from freeact_tui.tui.screens.picker import PickerScreen
from freeact_tui.tui.widgets.completion_menu import CompletionMenu
from freeact_tui.tui.widgets.prompt import PromptInput
from tests import helpers
from tests.helpers import main, ready, until
from tests.scripted import script

pytestmark = [pytest.mark.kernel, pytest.mark.asyncio(loop_scope="module")]

SIZE = (120, 40)

executor = helpers.kernel
make_app = helpers.chat_app

SKILL = "---\nname: task-planning\ndescription: Plan a task in small steps\n---\nPlan first.\n"


def menu(app: FreeactApp) -> CompletionMenu:
    return main(app).query_one(CompletionMenu)


def shown(app: FreeactApp) -> list[str]:
    """The menu's entries (what each completes to), top to bottom; empty while it is closed."""
    m = menu(app)
    return [e.text for e in m.entries] if m.is_open and m.display else []


def highlighted(app: FreeactApp) -> str | None:
    chosen = menu(app).highlighted
    return chosen.text if chosen is not None else None


async def typed_into(pilot: Pilot[None], text: str) -> PromptInput:
    """The prompt with ``text`` in it and the cursor at its end (as typed, without the ``@`` picker)."""
    screen = await ready(pilot)
    prompt = screen.prompt
    prompt.focus()
    prompt.load_text(text)
    prompt.move_cursor(prompt.document.end)
    await pilot.pause()
    return prompt


async def test_slash_opens_the_menu_it_filters_and_enter_runs(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    skill = tmp_path / ".freeact" / "skills" / "task-planning"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    app = make_app(script(["ok"]))
    async with app.run_test(size=SIZE) as pilot:
        prompt = (await ready(pilot)).prompt
        prompt.focus()
        assert not menu(app).display
        await pilot.press("slash")
        # Every registered command, then the skills (the project's and the bundled ones), with one-line help.
        listed = shown(app)
        assert listed[: len(COMMANDS)] == [spec.name for spec in COMMANDS] and "task-planning" in listed
        rows = [str(menu(app).options.get_option_at_index(i).prompt) for i in range(len(listed))]
        assert "/resume [ID]" in rows[3] and "Resume a session by id" in rows[3]
        skill_row = rows[listed.index("task-planning")]
        assert "/task-planning" in skill_row and "Skill: Plan a task in small steps" in skill_row
        assert menu(app).region.bottom <= prompt.region.y  # drawn just above the prompt
        await pilot.press("h", "e")
        assert shown(app) == ["help", "theme"] and highlighted(app) == "help"
        assert prompt.text == "/he"  # typing goes on in the prompt
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert prompt.text == ""  # it ran: the prompt is empty, as after a typed command
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, HelpScreen))
        # A skill: Enter puts it at the start of the prompt for its arguments, it is not sent.
        prompt.focus()
        await pilot.press("slash", "t", "a", "s", "k")
        assert shown(app) == ["task-planning"]
        await pilot.press("enter")
        await pilot.pause()
        assert prompt.text == "/task-planning " and not shown(app)
        assert app.agent is not None and not app.agent.history
        # Typed in full, Enter sends it as typed (freeact's "/<skill>"), as without the menu.
        prompt.load_text("")
        await pilot.press(*"/task-planning")
        assert highlighted(app) == "task-planning"
        await pilot.press("enter")
        await until(pilot, lambda: app.agent is not None and len(app.agent.history) >= 2)
        await until(pilot, lambda: not main(app).turn_running)
        assert prompt.text == ""


async def test_menu_keys_move_complete_and_close_without_losing_text(
    make_app: Callable[..., FreeactApp],
) -> None:
    app = make_app(script(["ok"]))
    async with app.run_test(size=SIZE) as pilot:
        prompt = (await ready(pilot)).prompt
        prompt.focus()
        await pilot.press("slash", "c", "o")
        assert shown(app)[:4] == ["context", "compact", "cost", "config"]
        await pilot.press("down", "down")
        assert highlighted(app) == "cost"
        await pilot.press("up")
        assert highlighted(app) == "compact"
        await pilot.press("up", "up")  # wraps to the end of the list
        assert highlighted(app) == shown(app)[-1]
        await pilot.press("down", "down")
        await pilot.press("tab")  # completes, runs nothing
        await pilot.pause()
        assert prompt.text == "/compact " and not shown(app)
        assert app.focused is prompt
        # Esc closes the menu and keeps the text; it stays closed until the text changes.
        prompt.load_text("")
        await pilot.press("slash", "m")
        assert shown(app)
        await pilot.press("escape")
        await pilot.pause()
        assert not shown(app) and prompt.text == "/m" and app.focused is prompt
        await pilot.press("o")
        assert shown(app)[0] == "model"
        # Up/Down in the menu never browse the prompt history …
        prompt.remember("an earlier prompt")
        prompt.remember("/help")
        await pilot.press("up")
        assert prompt.text == "/mo"
        # … and a "/help" browsed to opens no menu: Up goes on browsing.
        prompt.clear_input()
        await pilot.pause()
        await pilot.press("up")
        await until(pilot, lambda: prompt.text == "/help")
        await pilot.pause()
        assert not shown(app)
        await pilot.press("up")
        assert prompt.text == "an earlier prompt"
        # With text after the cursor, Enter only completes (that text would become the argument).
        prompt.load_text("/mo\nswitch to the other one")
        prompt.move_cursor((0, 3))
        await pilot.pause()
        assert highlighted(app) == "model"
        await pilot.press("enter")
        await pilot.pause()
        assert prompt.text == "/model \nswitch to the other one" and not isinstance(app.screen, PickerScreen)
        # A click takes an entry as Enter does.
        prompt.load_text("")
        await pilot.press("slash", "h", "e")
        await pilot.click("#completion-options", offset=(3, 0))
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))


async def test_tab_completes_commands_paths_and_session_ids(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    (tmp_path / "src").mkdir()
    for name in ("src/alpha.py", "src/beta.py", "notes.md"):
        (tmp_path / name).write_text("x\n")
    store = SessionStore(tmp_path / "sessions")
    older = store.new_session()
    older.append(helpers.conversation("Plot the CSV"))
    app = make_app(script(["ok"]))
    async with app.run_test(size=SIZE) as pilot:
        # A command name: unique, completed with a space after it (the menu was closed with Esc).
        prompt = await typed_into(pilot, "/ski")
        await pilot.press("escape", "tab")
        await until(pilot, lambda: prompt.text == "/skills ")
        assert app.focused is prompt
        # A path after "@": as far as the files agree, then the menu lists the rest.
        prompt = await typed_into(pilot, "look at @sr")
        await pilot.press("tab")
        await until(pilot, lambda: prompt.text == "look at @src/")
        assert shown(app) == ["src/alpha.py", "src/beta.py"]
        await pilot.press("b", "tab")  # typing filters the list; Tab takes the highlighted path
        await until(pilot, lambda: prompt.text == "look at @src/beta.py ")
        assert not shown(app) and app.focused is prompt
        prompt = await typed_into(pilot, "and @NO")
        await pilot.press("tab")
        await until(pilot, lambda: prompt.text == "and @notes.md ")
        # A session id after /resume, from the session store.
        prompt = await typed_into(pilot, f"/resume {older.id[:2]}")
        await pilot.press("tab")
        await until(pilot, lambda: prompt.text == f"/resume {older.id} ")
        await pilot.press("enter")
        await until(pilot, lambda: app.agent is not None and app.agent.session_id == older.id)
        # Nothing matches: said, the text and the focus stay.
        prompt = await typed_into(pilot, "see @zzz")
        await pilot.press("tab")
        await until(pilot, lambda: any("No file matches" in str(n.message) for n in app._notifications))
        assert prompt.text == "see @zzz" and app.focused is prompt
        # Nothing to complete: Tab moves the focus on, as before.
        prompt = await typed_into(pilot, "plain words")
        await pilot.press("tab")
        assert app.focused is not prompt and prompt.text == "plain words"


async def test_the_palette_and_the_menu_share_one_registry(make_app: Callable[..., FreeactApp]) -> None:
    # /theme without an argument, from the menu, opens the picker (it said "needs an argument").
    app = make_app(script(["ok"]))
    async with app.run_test(size=SIZE) as pilot:
        prompt = (await ready(pilot)).prompt
        prompt.focus()
        await pilot.press("slash", "t", "h", "e", "m", "e", "enter")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen))
        assert not app._notifications or all(
            "needs an argument" not in str(n.message) for n in app._notifications
        )
