"""Toasts never cover a dialog (issue 43: a toast drew over the theme picker): below the box where
they fit, else above it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from textual.widgets._toast import Toast

from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.tui.app import FreeactApp
from freeact_tui.tui.screens.picker import PickerScreen
from freeact_tui.tui.toast_place import toast_margin
from tests import helpers
from tests.helpers import send, until


@given(st.integers(5, 80), st.integers(0, 80), st.integers(0, 80), st.integers(1, 12))
def test_toasts_stand_clear_of_the_box_where_there_is_room(
    height: int, top: int, size: int, toasts: int
) -> None:
    top = min(top, height)
    bottom = min(top + size, height)
    margin = toast_margin(height, top, bottom, toasts)
    toast_top, toast_bottom = height - margin - toasts, height - margin
    clear = toast_bottom <= top or toast_top >= bottom
    if height - bottom >= toasts or top >= toasts:  # room below or above
        assert clear and toast_top >= 0


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


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
async def test_a_toast_does_not_cover_the_theme_picker(
    make_app: Callable[..., FreeactApp], size: tuple[int, int]
) -> None:
    from tests.scripted import script

    app = make_app(script(["ok"]))
    async with app.run_test(size=size, notifications=True) as pilot:
        await send(pilot, "/theme")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen))
        app.notify("Something to say while the picker is open.", timeout=30)
        screen = app.screen
        await until(
            pilot, lambda: bool(screen.query(Toast)) and all(t.region.height for t in screen.query(Toast))
        )
        await pilot.pause(0.3)
        box = screen.query_one("#picker-box").region
        for toast in screen.query(Toast):
            assert not toast.region.overlaps(box), (toast.region, box)


@pytest.mark.asyncio
async def test_a_dialog_pushed_as_the_app_shuts_down_ends_it_cleanly() -> None:
    """A turn that asks for approval just as Ctrl+Q ends the app pushes a dialog that is never mounted;
    placing its toasts must not raise (it did: Textual's SignalError, exit status 1)."""
    from textual.app import App, ComposeResult
    from textual.screen import ModalScreen
    from textual.widgets import Static

    from freeact_tui.tui.toast_place import keep_toasts_off_dialogs

    class Dialog(ModalScreen[None]):
        def compose(self) -> ComposeResult:
            yield Static("approve?")

    class Small(App[None]):
        def on_mount(self) -> None:
            keep_toasts_off_dialogs(self)

    app = Small()
    async with app.run_test() as pilot:
        dialog = Dialog()
        assert not dialog.is_running
        app.screen_change_signal.publish(dialog)  # what Textual publishes for a screen not yet running
        app.push_screen(Dialog())
        await pilot.pause()
        assert app.screen.is_running  # a mounted dialog is still placed
    assert app.return_code in (0, None)
