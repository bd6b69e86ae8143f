"""The ``@`` picker in a cloned repository whose git config runs a program (issue 39).

The real app under Pilot, the folder's config loaded as the command line loads it: not trusted, the
picker walks the folder (no git at all); trusted, git lists the files through ``gitrun`` and the
repository's ``core.fsmonitor`` still never runs.
"""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from textual.widgets import OptionList

from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.project.config import load_config
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.file_picker import FilePicker
from freeact_tui.tui.screens.main import MainScreen
from freeact_tui.tui.screens.trust import TrustScreen
from freeact_tui.tui.widgets.prompt import PromptInput
from tests.helpers import until
from tests.scripted import script

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]
SIZE = (120, 40)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def executor(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[KernelExecutor]:
    work = tmp_path_factory.mktemp("kernel")
    ex = KernelExecutor(working_dir=work, images_dir=work / "images")
    await ex.start()
    yield ex
    await ex.stop()


def clone(tmp_path: Path) -> tuple[Path, Path]:
    """A folder with project files (so trust is asked), a git repository whose config runs a program on
    any listing, and a file only git ignores (``info/exclude``, which the walk does not read)."""
    folder = tmp_path / "clone"
    folder.mkdir()
    marker = tmp_path / "FSMONITOR-RAN"
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    subprocess.run(["git", "config", "core.fsmonitor", f"touch {marker}; false"], cwd=folder, check=True)
    (folder / ".git" / "info" / "exclude").write_text("excluded.txt\n")
    (folder / ".freeact-tui.toml").write_text('theme = "textual-dark"\n')
    (folder / "main.py").write_text("print('hi')\n")
    (folder / "excluded.txt").write_text("x\n")
    return folder, marker


async def listed_after_at(folder: Path, executor: KernelExecutor, key: str) -> list[str]:
    config = load_config(
        None, {"working_dir": str(folder), "sessions_dir": str(folder.parent / "sessions")}, cwd=folder
    )
    app = FreeactApp(config, model=script(["ok"]).model(), executor=executor)  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        await until(
            pilot, lambda: isinstance(app.screen, TrustScreen) and bool(app.screen.query("#trust-text"))
        )
        await pilot.press(key)
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        app.screen.query_one(PromptInput).focus()
        await pilot.press("@")
        await until(pilot, lambda: isinstance(app.screen, FilePicker) and app.screen.shown == "")
        listed = app.screen.query_one(OptionList)
        names = [str(listed.get_option_at_index(k).prompt) for k in range(listed.option_count)]
        await pilot.press("escape")
    return names


async def test_the_picker_walks_a_folder_not_trusted_and_runs_no_git(
    tmp_path: Path, executor: KernelExecutor
) -> None:
    folder, marker = clone(tmp_path)
    names = await listed_after_at(folder, executor, "n")  # not now: the folder stays untrusted
    assert "main.py" in names and "excluded.txt" in names  # the walk (git would leave excluded.txt out)
    assert not marker.exists()


async def test_the_picker_in_a_trusted_folder_lists_with_git_and_runs_none_of_its_programs(
    tmp_path: Path, executor: KernelExecutor
) -> None:
    folder, marker = clone(tmp_path)
    names = await listed_after_at(folder, executor, "t")
    assert "main.py" in names and "excluded.txt" not in names  # git listed them
    assert not marker.exists()
