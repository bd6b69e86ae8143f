"""Snapshots of the ``/`` command menu above the prompt at 80×24 and 120×40, and of the ``/theme``
picker (issue #33; reviewed as pictures)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from freeact_tui.tui.screens.picker import PickerScreen
from freeact_tui.tui.widgets.completion_menu import CompletionMenu
from tests.helpers import SnapCompare, before, main, send
from tests.helpers import own_kernel_until as until
from tests.helpers import snapshot_app as make_app
from tests.scripted import script

pytestmark = [pytest.mark.kernel, pytest.mark.usefixtures("home_is_tmp")]  # ~/work in the welcome line


def _typed(*keys: str) -> Any:
    async def type_keys(pilot: Pilot[Any]) -> None:
        main(pilot.app).prompt.focus()
        await pilot.press(*keys)
        await until(pilot, lambda: main(pilot.app).query_one(CompletionMenu).is_open)

    return type_keys


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_command_menu_open(snap_compare: SnapCompare, tmp_path: Path, size: tuple[int, int]) -> None:
    assert snap_compare(
        make_app(script(["unused"]), tmp_path), terminal_size=size, run_before=before(_typed("slash"))
    )


def test_command_menu_filtered(snap_compare: SnapCompare, tmp_path: Path) -> None:
    keys = ("slash", "c", "o", "down")
    assert snap_compare(
        make_app(script(["unused"]), tmp_path), terminal_size=(80, 24), run_before=before(_typed(*keys))
    )


def test_theme_picker(snap_compare: SnapCompare, tmp_path: Path) -> None:
    async def pick(pilot: Pilot[Any]) -> None:
        await send(pilot, "/theme", wait_ready=False)
        await until(pilot, lambda: isinstance(pilot.app.screen, PickerScreen))
        await pilot.press("d", "a", "r", "k")

    assert snap_compare(
        make_app(script(["unused"]), tmp_path), terminal_size=(80, 24), run_before=before(pick)
    )
