"""Slash command parsing and the command-palette provider, under a real Textual app."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.command import CommandPalette
from textual.pilot import Pilot
from textual.widgets import Static

from freeact_tui.tui.commands import (
    COMMANDS,
    SlashCommand,
    SlashCommandProvider,
    SlashError,
    get_command,
    parse_slash,
    unescape_prompt,
)


def test_registry_has_every_command_with_description() -> None:
    names = [spec.name for spec in COMMANDS]
    assert names == [
        "help", "new", "sessions", "resume", "model", "theme", "export", "context", "compact", "undo", "rewind",
        "diff", "clear", "status", "cost", "mcp", "config", "init", "memory", "copy", "permissions", "skills",
        "quit", "exit",
    ]  # fmt: skip
    assert get_command("compact").usage == "/compact [FOCUS]"  # type: ignore[union-attr]
    assert all(spec.description for spec in COMMANDS)
    assert get_command("/resume") is not None and get_command("resume").usage == "/resume [ID]"  # type: ignore[union-attr]
    assert get_command("export").usage == "/export [PATH]"  # type: ignore[union-attr]
    assert get_command("nope") is None


def test_plain_prompts_are_not_commands() -> None:
    assert parse_slash("hello") is None
    assert parse_slash("  what is /help?") is None
    assert parse_slash("/etc/hosts has a typo, fix it") is None
    assert parse_slash("//help is a word") is None
    assert unescape_prompt("//help is a word") == "/help is a word"
    assert unescape_prompt("plain") == "plain"


def test_valid_commands() -> None:
    assert parse_slash("/help") == SlashCommand("help")
    assert parse_slash("  /NEW  ") == SlashCommand("new")
    assert parse_slash("/resume 3f2a") == SlashCommand("resume", "3f2a")
    assert parse_slash("/model   openai:gpt-4o ") == SlashCommand("model", "openai:gpt-4o")
    assert parse_slash("/export ~/out dir/chat.md") == SlashCommand("export", "~/out dir/chat.md")
    assert parse_slash("/export") == SlashCommand("export", "")
    assert parse_slash("/theme freeact-light").spec.name == "theme"  # type: ignore[union-attr]


def test_unknown_command_suggests_the_closest() -> None:
    result = parse_slash("/hlep")
    assert isinstance(result, SlashError)
    assert result.suggestion == "/help" and "Did you mean /help?" in result.message
    assert "//" in result.message  # tells how to send a literal slash
    prefix = parse_slash("/ses")
    assert isinstance(prefix, SlashError) and prefix.suggestion == "/sessions"
    nothing = parse_slash("/zzzzzz")
    assert isinstance(nothing, SlashError) and nothing.suggestion is None
    bare = parse_slash("/")
    assert isinstance(bare, SlashError)


def test_argument_errors() -> None:
    # Without an argument these open a picker (tests/tui/test_tui_pickers.py).
    assert [parse_slash(f"/{name}") for name in ("resume", "model", "theme")] == [
        SlashCommand("resume"),
        SlashCommand("model"),
        SlashCommand("theme"),
    ]
    extra = parse_slash("/clear everything")
    assert isinstance(extra, SlashError) and "takes no argument" in extra.message


class PaletteHost(App[None]):
    COMMANDS = {SlashCommandProvider}

    def __init__(self) -> None:
        super().__init__()
        self.ran: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static("host")

    def action_slash(self, text: str) -> None:
        self.ran.append(text)


async def _choose(app: PaletteHost, pilot: Pilot[None], query: str) -> None:
    await app.run_action("command_palette")
    await pilot.pause()
    assert isinstance(app.screen, CommandPalette)
    await pilot.press(*query)
    await pilot.pause(0.3)  # the palette searches in a worker
    await pilot.press("enter")
    await pilot.pause()


async def test_palette_runs_a_command() -> None:
    app = PaletteHost()
    async with app.run_test(size=(100, 30)) as pilot:
        await _choose(app, pilot, "sessions")
        assert app.ran == ["/sessions"]


async def test_palette_offers_themes_and_typed_arguments() -> None:
    app = PaletteHost()
    async with app.run_test(size=(100, 30)) as pilot:
        await _choose(app, pilot, "theme nord")
        await _choose(app, pilot, "resume 3f2a9c")
        await _choose(app, pilot, "model openai:gpt-4o")
        assert app.ran == ["/theme nord", "/resume 3f2a9c", "/model openai:gpt-4o"]


async def test_palette_discovery_lists_argument_free_commands() -> None:
    app = PaletteHost()
    async with app.run_test(size=(100, 30)) as pilot:
        provider = SlashCommandProvider(app.screen)
        shown = [hit.text async for hit in provider.discover()]
        assert shown == [
            "/help", "/new", "/sessions", "/resume", "/model", "/theme", "/export", "/context", "/compact", "/undo", "/rewind", "/diff", "/clear",
            "/status", "/cost", "/mcp", "/config", "/init", "/memory", "/copy", "/permissions", "/skills", "/quit", "/exit",
        ]  # fmt: skip
        await pilot.pause()
