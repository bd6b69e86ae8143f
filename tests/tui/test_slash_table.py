"""Every registered slash command has a handler: the registry and the dispatch table cannot drift."""

from freeact_tui.tui import slash_dispatch
from freeact_tui.tui.commands import COMMANDS


def test_every_command_is_handled() -> None:
    names = {spec.name for spec in COMMANDS}
    handled = set(slash_dispatch._HANDLERS) | slash_dispatch._PICKERS
    assert names - handled == set()
    assert handled - names == set()  # no handler for a command nobody can type


def test_agent_changing_commands_exist() -> None:
    names = {spec.name for spec in COMMANDS}
    assert slash_dispatch._CHANGES_AGENT <= names
