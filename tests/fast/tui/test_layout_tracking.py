"""A block of the log whose content arrives in the frame in which another block changes is laid out
with its new height (Textual 8.2.8's ``Screen._on_layout`` kept its cached height of 0; see
``freeact_tui/tui/layout_tracking.py``). Seen as a flaky snapshot: the model's text above an action
missing behind the approval dialog; and, live, a reply not drawn until the next turn."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from freeact_tui.tui.layout_tracking import LayoutTrackingScreen


class Log(VerticalScroll):
    DEFAULT_CSS = "Log { layout: stream; }"


class Block(Vertical):
    DEFAULT_CSS = "Block { height: auto; layout: stream; } Block > Vertical { height: auto; layout: stream; }"


def log_app(screen: type[Screen[None]]) -> App[None]:
    class LogScreen(screen):  # type: ignore[valid-type,misc]
        def compose(self) -> ComposeResult:
            yield Log()

    class LogApp(App[None]):
        def on_mount(self) -> None:
            self.push_screen(LogScreen())

    return LogApp()


async def heights(screen: type[Screen[None]]) -> tuple[int, int]:
    app = log_app(screen)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        log = app.screen.query_one(Log)
        inner = Vertical()
        block = Block(inner)
        other = Static("action")
        await log.mount_all([Static("prompt"), block, other])
        await pilot.pause()
        # In one frame: the block's first line arrives, a later block of the log changes.
        await inner.mount(Static("response text"))
        other.update("action\nwaiting for approval")
        await pilot.pause()
        await pilot.pause()
        return block.region.height, inner.region.height


async def test_a_nested_block_gets_its_new_height() -> None:
    assert await heights(LayoutTrackingScreen) == (1, 1)


def test_the_main_screen_tracks_layout_so() -> None:
    from freeact_tui.tui.screens.main import MainScreen

    assert issubclass(MainScreen, LayoutTrackingScreen)
