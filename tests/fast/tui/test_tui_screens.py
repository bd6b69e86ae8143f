"""Help, first-run and confirm screens under a real Textual app, with snapshots."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Button, Footer, Input, Markdown, Static

from freeact_tui.agent.models import missing_setup
from freeact_tui.project import paths
from freeact_tui.tui.commands import COMMANDS
from freeact_tui.tui.screens.confirm import ConfirmScreen
from freeact_tui.tui.screens.first_run import FirstRunScreen, setup_guide
from freeact_tui.tui.screens.help import HelpScreen, collect_bindings

PINNED_CONFIG = Path("/home/user/.config/freeact-tui/config.toml")


class Composer(Input):
    """A focusable widget with its own group of bindings."""

    HELP_GROUP = "Prompt"
    BINDINGS = [Binding("ctrl+r", "noop", "Search history")]

    def on_mount(self) -> None:
        self.cursor_blink = False  # a blinking cursor would make snapshots flaky

    def action_noop(self) -> None:
        pass


class Host(App[None]):
    """A small app with bindings in several places, like the real one."""

    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("f1", "help", "Help"),
        Binding("question_mark", "help", "Help", show=False),
        Binding("ctrl+b", "noop", "Toggle side panel", group=Binding.Group("Panels")),
        Binding("ctrl+x", "noop", ""),  # no description: not listed
    ]

    def __init__(self) -> None:
        super().__init__()
        self.answers: list[bool | None] = []

    def compose(self) -> ComposeResult:
        yield Static("main screen", id="main")
        yield Composer(placeholder="Ask anything")
        yield Footer()

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_noop(self) -> None:
        pass

    def ask(self) -> None:
        self.push_screen(
            ConfirmScreen("Delete session 3f2a9c?", "Its history and tool results are removed for good."),
            self.answers.append,
        )


async def test_help_lists_bindings_by_group_and_every_command() -> None:
    app = Host()
    async with app.run_test(size=(120, 40)) as pilot:
        rows = collect_bindings(app.screen)
        keys = {(key, desc, group) for key, desc, group in rows}
        assert ("^r", "Search history", "Prompt") in keys
        assert ("^q", "Quit", "Global") in keys
        assert ("^b", "Toggle side panel", "Panels") in keys
        assert ("f1", "Help", "Global") in keys
        assert not any(key == "^x" for key, _, _ in rows)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = "\n".join(str(w.render()) for w in app.screen.query(Static))
        for spec in COMMANDS:
            assert spec.usage in text and spec.description in text
        assert "Search history" in text and "Toggle side panel" in text and "Panels" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


@pytest.mark.parametrize("key", ["escape", "q", "f1", "question_mark"])
async def test_help_closes_with(key: str) -> None:
    app = Host()
    async with app.run_test(size=(120, 40)) as pilot:
        app.set_focus(None)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press(key)
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_help_with_explicit_rows() -> None:
    app = Host()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.push_screen(HelpScreen([("y", "Approve the action", "Approval")], commands=[]))
        await pilot.pause()
        text = "\n".join(str(w.render()) for w in app.screen.query(Static))
        assert "Approve the action" in text and "Search history" not in text


@pytest.mark.parametrize(
    ("keys", "answer"), [(["y"], True), (["enter"], True), (["n"], False), (["escape"], False)]
)
async def test_confirm_keys(keys: list[str], answer: bool) -> None:
    app = Host()
    async with app.run_test(size=(120, 40)) as pilot:
        app.ask()
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        app.set_focus(None)  # keys, not a focused button, decide
        await pilot.press(*keys)
        await pilot.pause()
        assert app.answers == [answer]
        assert not isinstance(app.screen, ConfirmScreen)


async def test_confirm_buttons_and_enter_on_no() -> None:
    app = Host()
    async with app.run_test(size=(120, 40)) as pilot:
        app.ask()
        await pilot.pause()
        await pilot.click("#confirm-no")
        await pilot.pause()
        app.ask()
        await pilot.pause()
        await pilot.click("#confirm-yes")
        await pilot.pause()
        app.ask()
        await pilot.pause()
        app.screen.query_one("#confirm-no", Button).focus()
        await pilot.press("enter")  # Enter presses the focused No, it does not confirm
        await pilot.pause()
        assert app.answers == [False, True, False]


class FirstRunHost(App[str]):
    def __init__(self, problem: str) -> None:
        super().__init__()
        self.problem = problem
        self.continued = False

    def compose(self) -> ComposeResult:
        yield Static("main screen (no agent)", id="main")

    def on_mount(self) -> None:
        self.push_screen(FirstRunScreen(self.problem, config_file=PINNED_CONFIG), self._after)

    def _after(self, go_on: bool | None) -> None:
        if go_on:
            self.continued = True
        else:
            self.exit("quit")


def test_setup_guide_says_exactly_what_to_set() -> None:
    guide = setup_guide("No model is configured.")
    assert str(paths.user_config_file()) in guide
    for needle in (
        'model = "anthropic:claude-sonnet-4-5"',
        "--model",
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "GEMINI_API_KEY or GOOGLE_API_KEY",
        "GROQ_API_KEY",
        "MISTRAL_API_KEY",
        "OLLAMA_BASE_URL",
        'base_url = "http://localhost:11434/v1"',
        "--model demo",
    ):
        assert needle in guide, needle


async def test_first_run_continue_and_quit() -> None:
    problem = missing_setup("anthropic:claude-sonnet-4-5")
    assert problem is not None
    app = FirstRunHost(problem)
    async with app.run_test(size=(120, 40)) as pilot:
        assert isinstance(app.screen, FirstRunScreen)
        markdown = app.screen.query_one(Markdown)
        assert "ANTHROPIC_API_KEY" in markdown.source and str(PINNED_CONFIG) in markdown.source
        await pilot.press("enter")
        await pilot.pause()
        assert app.continued and not isinstance(app.screen, FirstRunScreen)
    app = FirstRunHost(problem)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("q")
        await pilot.pause()
    assert app.return_value == "quit"


def test_snapshot_help_screen(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(Host(), terminal_size=(120, 40), press=["f1"])


def test_snapshot_help_screen_at_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(Host(), terminal_size=(80, 24), press=["f1"])


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_snapshot_first_run_screen(snap_compare, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    app = FirstRunHost(
        'No model is configured. Set `model = "provider:name"` in the config file '
        '(e.g. "anthropic:claude-sonnet-4-5") or start with `--model`.'
    )
    assert snap_compare(app, terminal_size=size)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_snapshot_confirm_dialog(snap_compare, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    app = Host()

    async def ask(pilot) -> None:  # type: ignore[no-untyped-def]
        app.ask()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=ask)


@pytest.mark.parametrize("width", [60, 80, 100, 140])
async def test_help_rows_wrap_in_their_own_column_at_any_width(width: int) -> None:
    """A long description wraps beside its key, never back under the key column (issue #43: at 80
    columns the help read ``from`` and ``block found)`` on lines of their own)."""
    from freeact_tui.tui.widgets.columns import Columns

    app = Host()
    async with app.run_test(size=(width, 30)) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        tables = list(app.screen.query(Columns))
        assert tables
        starts = set()
        for table in tables:
            cells = list(table.children)
            keys, texts = cells[0::2], cells[1::2]
            for key, text in zip(keys, texts, strict=True):
                assert text.region.y == key.region.y  # one row: side by side
                assert text.region.x > key.region.x
                assert text.region.right <= table.region.right  # wraps inside, never past the edge
                starts.add(text.region.x)
        assert len(starts) == 1  # every description in one column down the whole screen
        wrapped = [t for table in tables for t in list(table.children)[1::2] if t.region.height > 1]
        if width <= 80:
            assert wrapped  # (the long ones do wrap at this width: the case is exercised)
