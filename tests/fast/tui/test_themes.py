"""Theme files: ours load and register, user themes add or replace, broken files are skipped; snapshots."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.widgets import Footer, Header, Static

from freeact_tui.project import paths
from freeact_tui.project.config import load_config, save_user_setting
from freeact_tui.store import SessionInfo
from freeact_tui.tui.screens.confirm import ConfirmScreen
from freeact_tui.tui.themes import (
    BUNDLED_THEMES,
    DEFAULT_THEME,
    ThemeError,
    load_theme_dir,
    load_theme_file,
    register_themes,
)
from freeact_tui.tui.widgets.side_panel import SidePanel

NOW = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)


class ThemedHost(App[None]):
    """An idle screen built from our pieces: header, conversation area, side panel, footer."""

    TITLE = "freeact"
    BINDINGS = [("f2", "noop", "Side panel"), ("f1", "noop", "Help")]

    def __init__(self, theme: str | None = None) -> None:
        super().__init__()
        self.warnings = register_themes(self)
        if theme:
            self.theme = theme

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="conversation"):
            yield Static("[b]Ready.[/b] Ask anything — Enter sends, /help lists commands.", id="welcome")
            yield Static("[$success]✓ kernel ready[/]   [$warning]◆ waiting[/]   [$error]✗ failed[/]")
        yield SidePanel(clock=lambda: NOW)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(SidePanel).set_sessions(
            [
                SessionInfo(
                    id="0b7c6a52-3f1e-4b9a-9d2c-5e8f7a6b1c2d",
                    title="Plot the CSV sales data by month",
                    created=NOW - timedelta(hours=2),
                    updated=NOW - timedelta(minutes=12),
                    cwd=None,
                    model="test",
                    message_count=14,
                    subagents={},
                    size_bytes=18_432,
                ),
                SessionInfo(
                    id="1a2b3c4d-0000-4000-8000-000000000001",
                    title="Refactor the parser",
                    created=NOW - timedelta(days=3),
                    updated=NOW - timedelta(days=2),
                    cwd=None,
                    model="test",
                    message_count=42,
                    subagents={"sub-1": "lint"},
                    size_bytes=240_000,
                ),
            ],
            current_id="0b7c6a52-3f1e-4b9a-9d2c-5e8f7a6b1c2d",
        )

    def action_noop(self) -> None:
        pass


def _write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def test_bundled_themes_load_cleanly() -> None:
    themes, warnings = load_theme_dir(paths.bundled_themes_dir())
    assert warnings == []
    names = {t.name for t in themes}
    assert set(BUNDLED_THEMES) <= names and DEFAULT_THEME in names
    light = next(t for t in themes if t.name == "freeact-light")
    dark = next(t for t in themes if t.name == "freeact-dark")
    assert dark.dark and not light.dark


async def test_register_keeps_builtins_and_applies_ours() -> None:
    app = ThemedHost()
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.warnings == []
        assert {"freeact-dark", "freeact-light", "textual-dark", "nord"} <= set(app.available_themes)
        app.theme = "freeact-light"
        await pilot.pause()
        assert app.current_theme.name == "freeact-light"
        assert app.theme_variables["primary"].upper() == "#1F6FB2"
        assert app.screen.styles.background.hex.upper() == "#F6F7F9"
        app.theme = "freeact-dark"
        await pilot.pause()
        assert app.screen.styles.background.hex.upper() == "#15181E"


def test_user_theme_added_and_may_replace_ours() -> None:
    user = paths.user_themes_dir()
    _write(
        user,
        "mine.toml",
        'name = "mine"\nprimary = "#ff00aa"\nbackground = "#000000"\n[variables]\n"footer-key-foreground" = "#ff00aa"\n',
    )
    _write(user, "override.toml", 'name = "freeact-dark"\nprimary = "#00ff00"\n')
    _write(user, "nameless.toml", 'primary = "rgb(10, 20, 30)"\ndark = false\n')
    app = ThemedHost()
    assert app.warnings == []
    assert app.get_theme("mine") is not None and app.get_theme("mine").primary == "#ff00aa"  # type: ignore[union-attr]
    assert app.get_theme("freeact-dark").primary == "#00ff00"  # type: ignore[union-attr]
    nameless = app.get_theme("nameless")
    assert nameless is not None and nameless.dark is False


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name = [unclosed", "not valid TOML"),
        ('name = "x"\nprimary = "not-a-colour"\n', "`primary` is not a colour"),
        ('name = "x"\nprimary = "#fff"\nsparkle = true\n', "unknown key(s) sparkle"),
        ('name = "x"\nbackground = "#000"\n', "`primary` is required"),
        ('name = "x"\nprimary = "#fff"\ndark = "yes"\n', "`dark` must be true or false"),
        ('name = "x"\nprimary = "#fff"\ntext_alpha = 3\n', "between 0 and 1"),
        ('name = ""\nprimary = "#fff"\n', "`name` must be a non-empty string"),
        ('name = "x"\nprimary = "#fff"\nvariables = 3\n', "`variables` must be a table"),
        ('name = "x"\nprimary = "#fff"\n[variables]\n"footer-key-foreground" = "#zz0000"\n', "invalid value"),
    ],
)
def test_broken_user_theme_is_skipped_with_a_warning(text: str, problem: str) -> None:
    path = _write(paths.user_themes_dir(), "broken.toml", text)
    _write(paths.user_themes_dir(), "fine.toml", 'name = "fine"\nprimary = "#123456"\n')
    with pytest.raises(ThemeError, match="broken.toml"):
        load_theme_file(path)
    app = ThemedHost()  # never raises
    assert len(app.warnings) == 1
    assert str(path) in app.warnings[0] and problem in app.warnings[0] and "skipped" in app.warnings[0]
    assert app.get_theme("fine") is not None


def test_non_utf8_theme_is_skipped() -> None:
    directory = paths.user_themes_dir()
    directory.mkdir(parents=True)
    (directory / "binary.toml").write_bytes(b"\xff\xfe\x00name")
    themes, warnings = load_theme_dir(directory)
    assert themes == [] and "not UTF-8" in warnings[0]


def test_variables_accept_colours_alpha_and_text_styles() -> None:
    path = _write(
        paths.user_themes_dir(),
        "vars.toml",
        'primary = "#fff"\n[variables]\n"a" = "#4FA3E0 35%"\n"b" = "auto 60%"\n"c" = "bold reverse"\n"d" = "rgba(1,2,3,0.5)"\n',
    )
    theme = load_theme_file(path)
    assert theme.variables["c"] == "bold reverse"


def test_theme_choice_persists_in_user_config() -> None:
    save_user_setting("theme", "freeact-light")
    assert load_config().theme == "freeact-light"


async def test_theme_switch_keeps_dialogs_working() -> None:
    app = ThemedHost("freeact-light")
    answers: list[bool | None] = []
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(ConfirmScreen("Switch?", "Just checking."), answers.append)
        await pilot.pause()
        app.theme = "freeact-dark"
        await pilot.press("y")
        await pilot.pause()
        assert answers == [True]


def test_snapshot_idle_screen_freeact_dark(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(ThemedHost("freeact-dark"), terminal_size=(120, 40))


def test_snapshot_idle_screen_freeact_light(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(ThemedHost("freeact-light"), terminal_size=(120, 40))
