"""Slash commands typed in the prompt (``/help``, ``/resume ID`` …) and the same actions in the command palette.

Public interface:

- ``COMMANDS``: the registry, a tuple of ``CommandSpec(name, description, arg_hint, arg_required)``.
- ``parse_slash(text) -> SlashCommand | SlashError | None``: ``None`` when ``text`` is not a slash
  command (a normal prompt; ``//text`` sends ``/text`` literally — see ``unescape_prompt``),
  ``SlashCommand(name, arg)`` for a valid one, ``SlashError(message, suggestion)`` otherwise
  (unknown command with the closest match, missing or unexpected argument).
- ``SlashCommandProvider``: a ``textual.command.Provider``. Add it to ``App.COMMANDS``. Choosing a
  hit calls ``app.run_action("slash('/name arg')")``, so the app must define
  ``action_slash(self, text: str)`` that runs ``parse_slash(text)`` and dispatches on ``name``.
  Themes are offered from ``app.available_themes``; ``/resume``, ``/model`` and ``/export`` take
  their argument from what follows the command in the palette query.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider


@dataclass(frozen=True)
class CommandSpec:
    """One slash command: its name (without the slash), what it does, and its argument."""

    name: str
    description: str
    arg_hint: str = ""
    arg_required: bool = False

    @property
    def usage(self) -> str:
        """``/name ARG`` as shown in help, ``[ARG]`` when the argument is optional."""
        if not self.arg_hint:
            return f"/{self.name}"
        arg = self.arg_hint if self.arg_required else f"[{self.arg_hint}]"
        return f"/{self.name} {arg}"


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec("help", "Show key bindings and slash commands"),
    CommandSpec("new", "Start a new session"),
    CommandSpec("sessions", "Pick a past session to resume, newest first"),
    CommandSpec("resume", "Resume a session by id or prefix (none: pick one)", "ID"),
    CommandSpec("model", "Switch the model, e.g. openai:gpt-4o (none: pick one)", "NAME"),
    CommandSpec("theme", "Switch the colour theme, saved (none: pick one)", "NAME"),
    CommandSpec("export", "Export this session as Markdown", "PATH", False),
    CommandSpec("context", "Show what fills the model's context window"),
    CommandSpec("compact", "Summarise the older turns now to free context", "FOCUS", False),
    CommandSpec("undo", "Undo the last action's file changes (/undo turn: the last turn)", "turn"),
    CommandSpec("rewind", "Rewind files and/or the conversation to before a past message"),
    CommandSpec("diff", "Show what the last action changed (/diff N: N actions back)", "N"),
    CommandSpec("clear", "Start a fresh conversation (the old session is kept: /resume it)"),
    CommandSpec("status", "Show the model, session, working dir, execution, trust, MCP servers, rules"),
    CommandSpec("cost", "Show the tokens and cost of this session"),
    CommandSpec("mcp", "Show the MCP servers, their state and their tools"),
    CommandSpec("config", "Show the settings in effect and where each comes from"),
    CommandSpec("init", "Ask the agent to write an AGENTS.md for this project (its writes approved)"),
    CommandSpec("memory", "Open AGENTS.md, the project's notes for the agent"),
    CommandSpec("copy", "Copy last answer to the clipboard (Alt+C: the block found)"),
    CommandSpec("permissions", "List the permission rules; remove or change one"),
    CommandSpec("skills", "List the skills the agent can read (.freeact/skills, .agents/skills)"),
    CommandSpec("quit", "Quit (the session is kept; the command to resume it is printed)"),
    CommandSpec("exit", "Quit, as /quit"),
)

_BY_NAME = {spec.name: spec for spec in COMMANDS}


@dataclass(frozen=True)
class SlashCommand:
    """A parsed, valid slash command; ``arg`` is ``""`` when none was given."""

    name: str
    arg: str = ""

    @property
    def spec(self) -> CommandSpec:
        """The registry entry of this command."""
        return _BY_NAME[self.name]


@dataclass(frozen=True)
class SlashError:
    """A slash command that cannot run; ``message`` is shown to the user as is."""

    message: str
    suggestion: str | None = None


def get_command(name: str) -> CommandSpec | None:
    """The registry entry for ``name`` (without the slash), or ``None``."""
    return _BY_NAME.get(name.lstrip("/").lower())


def is_escaped(text: str) -> bool:
    """True for ``//…``: the user means a literal prompt starting with a slash."""
    return text.lstrip().startswith("//")


def unescape_prompt(text: str) -> str:
    """The prompt to send for ``//text`` or ``!!text`` (one character removed); other text unchanged."""
    stripped = text.lstrip()
    return stripped[1:] if stripped.startswith(("//", "!!")) else text


def parse_slash(text: str) -> SlashCommand | SlashError | None:
    """Parse a prompt that may be a slash command.

    Args:
        text: The prompt as typed.

    Returns:
        ``None`` if it is a normal prompt, a ``SlashCommand`` if valid, else a ``SlashError``.
    """
    stripped = text.strip()
    if not stripped.startswith("/") or is_escaped(stripped):
        return None
    head, _, rest = stripped[1:].partition(" ")
    if not head:
        return SlashError("Type a command after the slash, e.g. /help.", "/help")
    # A path such as "/etc/hosts is odd" is a prompt, not a command.
    if "/" in head:
        return None
    name, arg = head.lower(), rest.strip()
    spec = _BY_NAME.get(name)
    if spec is None:
        close = difflib.get_close_matches(name, list(_BY_NAME), n=1, cutoff=0.5)
        prefixed = [n for n in _BY_NAME if n.startswith(name)]
        guess = prefixed[0] if len(prefixed) == 1 else (close[0] if close else None)
        message = f"Unknown command /{name}."
        if guess:
            message += f" Did you mean /{guess}?"
        message += " Type /help for the list (start with // to send a prompt beginning with /)."
        return SlashError(message, f"/{guess}" if guess else None)
    if spec.arg_required and not arg:
        return SlashError(f"/{name} needs an argument: {spec.usage}", spec.usage)
    if arg and not spec.arg_hint:
        return SlashError(f"/{name} takes no argument (got {arg!r}).", f"/{name}")
    return SlashCommand(name, arg)


def _slash_action(text: str) -> str:
    return f"slash({text!r})"


class SlashCommandProvider(Provider):
    """Offers the slash commands in the command palette (Ctrl+P).

    Each hit runs ``app.run_action("slash('/…')")``; the app defines ``action_slash(text)``.
    """

    def _candidates(self, query: str) -> Iterator[tuple[str, str]]:
        """(command text, help) pairs worth offering for ``query``."""
        head, _, rest = query.strip().lstrip("/").partition(" ")
        arg = rest.strip()
        for spec in COMMANDS:
            if spec.name == "theme":
                for theme in sorted(self.app.available_themes):
                    yield f"/theme {theme}", f"Switch to the {theme} theme"
            elif spec.arg_required:
                # A free argument (id, model) can only come from what the user typed.
                if arg and head.lower() == spec.name:
                    yield f"/{spec.name} {arg}", spec.description
            elif spec.arg_hint and arg and head.lower() == spec.name:
                yield f"/{spec.name} {arg}", spec.description
            else:
                yield f"/{spec.name}", spec.description
        entries = getattr(self.app, "skill_entries", None)
        for name, description in entries() if callable(entries) else []:
            text = f"/{name} {arg}" if arg and head == name else f"/{name}"
            yield text, f"Skill: {description}"

    async def discover(self) -> Hits:
        """Argument-free commands, shown before anything is typed."""
        for spec in COMMANDS:
            if not spec.arg_required:
                yield DiscoveryHit(
                    f"/{spec.name}", partial(self._run, f"/{spec.name}"), help=spec.description
                )

    async def search(self, query: str) -> Hits:
        """Fuzzy-match commands (and typed arguments) against ``query``."""
        matcher = self.matcher(query.strip().lstrip("/"))
        for text, help_text in self._candidates(query):
            score = matcher.match(text.lstrip("/"))
            if score > 0:
                yield Hit(score, matcher.highlight(text), partial(self._run, text), text=text, help=help_text)

    async def _run(self, text: str) -> None:
        await self.app.run_action(_slash_action(text))


__all__ = [
    "COMMANDS",
    "CommandSpec",
    "SlashCommand",
    "SlashCommandProvider",
    "SlashError",
    "get_command",
    "is_escaped",
    "parse_slash",
    "unescape_prompt",
]
