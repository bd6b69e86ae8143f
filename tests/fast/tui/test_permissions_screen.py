"""``/permissions``: the rules screen lists every rule with where it lives, and removes or changes one by key."""

from __future__ import annotations

import asyncio
import json
import tomllib
from pathlib import Path

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import DataTable

from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.project import paths
from freeact_tui.project.config import Config
from freeact_tui.toolcalls import CodeAction, ShellAction
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.confirm import ConfirmScreen
from freeact_tui.tui.screens.permissions import PermissionsScreen
from freeact_tui.tui.widgets.prompt import PromptInput
from tests.scripted import script

SIZE = (120, 40)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "proj"
    (work / ".freeact").mkdir(parents=True)
    (work / ".freeact" / "permissions.toml").write_text(
        '[[allow]]\ntype = "ShellAction"\ntool_name = "bash"\ncommand = "wc -l a.txt"\n'
    )
    user = PermissionRules(paths.permissions_file(), working_dir=work)
    user.add("shell", "rm *", scope="always", effect="deny")
    # an old prefix rule, saved user-wide before code rules were kept with their folder (#42): still works,
    # listed as broad and as applying in any folder
    user.add("code", "import os*", scope="always", place="always")
    return work


async def until(pilot: Pilot[None], condition: object, limit: float = 10.0) -> None:
    assert callable(condition)
    deadline = asyncio.get_running_loop().time() + limit
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached in time"
        await pilot.pause(0.02)


def rows(screen: PermissionsScreen) -> list[tuple[str, ...]]:
    table = screen.query_one(DataTable)
    return [tuple(str(cell) for cell in table.get_row_at(k)) for k in range(table.row_count)]


async def select(pilot: Pilot[None], screen: PermissionsScreen, effect: str, pattern: str) -> None:
    index = next(k for k, row in enumerate(rows(screen)) if row[0] == effect and row[2] == pattern)
    screen.query_one(DataTable).move_cursor(row=index)
    await pilot.pause()


async def open_rules(pilot: Pilot[None], app: FreeactApp) -> PermissionsScreen:
    await until(pilot, lambda: app.agent_ready)
    prompt = app.main_screen.query_one(PromptInput)
    prompt.load_text("/permissions")
    prompt.focus()
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, PermissionsScreen))
    assert isinstance(app.screen, PermissionsScreen)
    return app.screen


async def test_permissions_lists_every_rule_with_where_it_lives(project: Path, tmp_path: Path) -> None:
    config = Config(sessions_dir=tmp_path / "sessions", working_dir=project, subagent_pool_size=0)
    app = FreeactApp(config, model=script(["hi"]).model(), eager_kernel=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.agent is not None)
        app.agent.permissions.add("shell", "ls *", scope="session")  # type: ignore[union-attr]
        screen = await open_rules(pilot, app)
        listed = rows(screen)
        assert ("allow", "shell", "ls *", "this session", "") in listed
        assert ("deny", "shell", "rm *", "user file", "") in listed
        assert ("allow", "shell", "wc -l a.txt", "freeact project", "") in listed
        assert ("allow", "code", "import os*", "user file (any folder)", "broad: any code may follow") in listed
        assert ("ask", "*", "path:/proc/**", "built in", "") in listed
        assert any(row[3] == "built in" and row[2] == "git status *" for row in listed)


async def test_permissions_removes_and_changes_rules_from_the_keyboard(project: Path, tmp_path: Path) -> None:
    config = Config(sessions_dir=tmp_path / "sessions", working_dir=project, subagent_pool_size=0)
    app = FreeactApp(config, model=script(["hi"]).model(), eager_kernel=False)
    toml = project / ".freeact" / "permissions.toml"
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_rules(pilot, app)
        rules = app.agent.permissions  # type: ignore[union-attr]
        assert rules.matching_rule(ShellAction("wc -l a.txt")).scope == "project"  # type: ignore[union-attr]

        await select(pilot, screen, "allow", "wc -l a.txt")
        await pilot.press("x")  # asks first: n keeps the rule
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await until(pilot, lambda: app.screen is screen)
        assert any(row[2] == "wc -l a.txt" for row in rows(screen)) and "wc -l" in toml.read_text()
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")  # removed from the freeact project file
        await until(pilot, lambda: app.screen is screen)
        assert not any(row[2] == "wc -l a.txt" for row in rows(screen))
        assert "wc -l" not in toml.read_text()
        assert rules.matching_rule(ShellAction("wc -l a.txt")).scope == "default"  # type: ignore[union-attr]

        await select(pilot, screen, "deny", "rm *")
        await pilot.press("k")  # deny -> ask, in the user file
        assert ("ask", "shell", "rm *", "user file", "") in rows(screen)
        saved = json.loads(paths.permissions_file().read_text())
        assert {"kind": "shell", "pattern": "rm *"} in saved["ask"] and not saved.get("deny")

        await select(pilot, screen, "allow", "import os*")
        await pilot.press("e")
        field = screen.query_one("#permissions-pattern")
        assert field.display
        field.value = ""  # type: ignore[attr-defined]
        await pilot.press(*"import os, sys*")
        await pilot.press("enter")
        assert ("allow", "code", "import os, sys*", "user file (any folder)", "broad: any code may follow") in rows(screen)
        assert rules.check(CodeAction("import os\nprint(1)")) == "ask"

        await select(pilot, screen, "ask", "path:/proc/**")
        await pilot.press("x")  # a built-in rule stays; the user is told why
        assert ("ask", "*", "path:/proc/**", "built in", "") in rows(screen)
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, PermissionsScreen))
    data = tomllib.loads(toml.read_text())
    assert all(rule.get("command") != "wc -l a.txt" for rule in data.get("allow", []))


class RulesHost(App[None]):
    """The rules screen over rules with fixed paths (the snapshot must not show a temporary dir)."""

    def __init__(self, rules: PermissionRules) -> None:
        super().__init__()
        self.rules = rules

    def on_mount(self) -> None:
        self.push_screen(PermissionsScreen(self.rules))


def test_snapshot_permissions_screen(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from freeact_tui.permissions.patterns import proposed_pattern

    rules = PermissionRules(None, working_dir=tmp_path)
    rules.path = Path("/home/user/.config/freeact-tui/permissions.json")  # shown only, never written
    rules.add("shell", "rm *", scope="session", effect="deny")
    rules.add("shell", "git commit *", scope="session")
    rules.add("code", proposed_pattern(CodeAction("print('hello')")), scope="session")
    rules.add("code", "from pathlib import Path*", scope="session")
    rules.add("code", "effects:in-folder", scope="session")  # in words, as the dialog offered it
    assert snap_compare(RulesHost(rules), terminal_size=(120, 40))
    assert snap_compare(RulesHost(rules), terminal_size=(80, 24))  # readable at 80x24 too


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 40)])
async def test_the_rules_fit_the_screen_and_the_highlighted_one_reads_in_full(
    project: Path, tmp_path: Path, size: tuple[int, int]
) -> None:
    """At any width the table fits its region (no column past the right edge) and a long pattern, cut
    in the table, is shown whole and wrapped under it when its row is highlighted."""
    long = "python -c " + " ".join(f"word{i}" for i in range(30)) + " *"
    config = Config(sessions_dir=tmp_path / "sessions", working_dir=project, subagent_pool_size=0)
    app = FreeactApp(config, model=script(["hi"]).model(), eager_kernel=False)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.agent is not None)
        app.agent.permissions.add("shell", long, scope="session")  # type: ignore[union-attr]
        screen = await open_rules(pilot, app)
        await pilot.pause()
        table = screen.query_one(DataTable)
        assert table.virtual_size.width <= table.scrollable_content_region.width
        assert table.region.right <= size[0]
        at = [row[2] for row in rows(screen)].index(long)  # the cell keeps it whole; the view cuts it
        table.move_cursor(row=at)
        await pilot.pause()
        detail = screen.query_one("#permissions-detail")
        assert long in str(detail.render()) and detail.region.right <= size[0]
