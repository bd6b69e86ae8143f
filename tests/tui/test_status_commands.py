"""``/status``, ``/cost``, ``/mcp``, ``/config``, ``/clear``, ``/init``, ``/memory`` (issue 43): the reports as
tables of plain values, where each setting comes from through the real config loader (every layer, as
generated cases), and the commands in the real app under Pilot."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.project import paths
from freeact_tui.project.config import load_config
from freeact_tui.store.sessions import SessionStore
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.commands import COMMANDS, parse_slash
from freeact_tui.tui.status_commands import INIT_PROMPT, config_rows, cost_rows, rows_text
from freeact_tui.tui.widgets.blocks import NoticeBlock, UserMessageBlock
from tests import helpers
from tests.helpers import send, until
from tests.scripted import script

NEW = ("clear", "status", "cost", "mcp", "config", "init", "memory")


def test_the_new_commands_are_in_the_table_with_one_line_help() -> None:
    names = {spec.name: spec for spec in COMMANDS}
    for name in NEW:
        assert name in names and "\n" not in names[name].description and names[name].description
        assert parse_slash(f"/{name}") is not None and not hasattr(parse_slash(f"/{name}"), "message")


def test_cost_rows() -> None:
    assert cost_rows(1234, 56, 2, 0.0123, False) == [
        ("Input tokens", "1,234"),
        ("Output tokens", "56"),
        ("Requests", "2"),
        ("Cost", "$0.0123"),
    ]
    rows = dict(cost_rows(1, 2, 1, None, True))
    assert "estimated" in rows["Input tokens"] and "unknown" in rows["Cost"]
    assert rows_text([("a", "1"), ("long", "2")]) == "a     1\nlong  2"


LAYERS = ("user", "project", "file", "command line")  # lowest first
KEYS = {
    "theme": ["nord", "gruvbox", "dracula"],
    "execution_timeout": [11.0, 22.0, 33.0],
    "max_subagents": [1, 2, 3],
}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(sorted(KEYS)), st.sets(st.sampled_from(LAYERS), min_size=1)))
def test_config_says_where_each_setting_comes_from(
    tmp_path_factory: pytest.TempPathFactory, placed: dict[str, set[str]]
) -> None:
    """Whatever layers set a key, /config names the highest of them (command line > --config > project > user)."""
    root = tmp_path_factory.mktemp("layers")
    work = root / "work"
    work.mkdir()
    values: dict[str, dict[str, object]] = {layer: {} for layer in LAYERS}
    for key, layers in placed.items():
        for i, layer in enumerate(sorted(layers)):
            values[layer][key] = KEYS[key][i % 3]

    def toml(data: dict[str, object]) -> str:
        return "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in data.items())

    user = paths.user_config_file()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(toml(values["user"]))
    explicit = root / "explicit.toml"
    explicit.write_text(toml(values["file"]))
    (work / paths.PROJECT_CONFIG_NAME).write_text(toml(values["project"]))
    try:
        config = load_config(explicit, dict(values["command line"]), cwd=work, trust_project=True)
    finally:
        user.unlink()
    shown = dict(config_rows(config))
    names = {
        "user": str(user),
        "file": str(explicit),
        "project": str(work / paths.PROJECT_CONFIG_NAME),
        "command line": "the command line",
    }
    for key in KEYS:
        layers = placed.get(key, set())
        winner = next((layer for layer in reversed(LAYERS) if layer in layers), None)
        expected = names[winner] if winner else "default"
        assert shown[key].endswith(f"← {expected}"), (key, shown[key], placed)
        if winner:
            assert repr(values[winner][key]) in shown[key]


# -- in the app --------------------------------------------------------------------------------------

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


def notices(app: FreeactApp) -> list[str]:
    return [b.text for b in app.main_screen.conversation.query(NoticeBlock)]


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_clear_starts_a_new_session_and_keeps_the_old_one(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    seen: list[str] = []
    app = make_app(script(["first answer"], ["second answer"]))
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "remember the word banana")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: not app.main_screen.turn_running)
        assert app.agent is not None
        old = app.agent.session_id
        await send(pilot, "/status")
        await until(pilot, lambda: any(old in n for n in notices(app)))
        await send(pilot, "/cost")
        await until(pilot, lambda: any("Input tokens" in n for n in notices(app)))
        await send(pilot, "/clear")
        await until(pilot, lambda: app.agent is not None and app.agent.session_id != old)
        await until(pilot, lambda: any(f"/resume {old[:8]}" in n for n in notices(app)))
        assert not app.main_screen.conversation.query(UserMessageBlock)
        await send(pilot, "what was the word?")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: not app.main_screen.turn_running)
        seen = [repr(m) for m in app.agent.history]
    assert not any("banana" in m for m in seen)  # the model starts fresh
    ids = {info.id for info in SessionStore(tmp_path / "sessions").list()}
    assert old in ids and len(ids) == 2  # the old session is kept, resumable


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_memory_opens_agents_md_and_init_asks_the_agent(
    make_app: Callable[..., FreeactApp], tmp_path: Path
) -> None:
    from freeact_tui.tui.screens.pager import PagerScreen

    app = make_app(script(["I looked and wrote it."]))
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "/memory")
        await until(pilot, lambda: any("/init" in n for n in notices(app)))
        (tmp_path / "AGENTS.md").write_text("# Notes\nRun the tests with pytest.\n")
        await send(pilot, "/memory")
        await until(pilot, lambda: isinstance(app.screen, PagerScreen))
        assert isinstance(app.screen, PagerScreen) and "Run the tests with pytest." in app.screen.text
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, PagerScreen))
        await send(pilot, "/init")
        await app.workers.wait_for_complete()
        await until(pilot, lambda: not app.main_screen.turn_running)
        assert [b.text for b in app.main_screen.conversation.query(UserMessageBlock)] == [INIT_PROMPT]
        assert app.agent is not None and INIT_PROMPT in repr(app.agent.history[0])


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("command", ["status", "config"])
async def test_a_long_value_wraps_in_its_own_column_at_80_columns(
    executor: KernelExecutor, tmp_path: Path, command: str
) -> None:
    """A report's rows are two columns: a value too long for the line (a deep working dir) wraps under
    itself, never back under the labels; the block copies as aligned text."""
    work = tmp_path / ("a-rather-long-folder-name-" * 3) / ("and-deeper-still-" * 3)
    work.mkdir(parents=True)
    app = helpers.make_app(
        script(["ok"]), tmp_path / "sessions", work, config={"subagent_pool_size": 0}, executor=executor
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, f"/{command}")
        await until(pilot, lambda: bool(app.main_screen.conversation.query(NoticeBlock).filter(".-rows")))
        await pilot.pause()
        block = app.main_screen.conversation.query(NoticeBlock).filter(".-rows").last()
        keys, values = list(block.query(".columns-key")), list(block.query(".columns-text"))
        assert keys and len(keys) == len(values)
        value_x = {v.region.x for v in values}
        assert len(value_x) == 1 and value_x.pop() > max(k.region.x for k in keys)  # one column, right of the labels
        assert max(v.region.height for v in values) > 1  # something wrapped, inside its column
        assert all(v.region.right <= block.region.right for v in values)
        assert "\n" in block.text and block.text.splitlines()[0].split()[0] == str(keys[0].render()).strip()
