"""Slash commands over ACP: the app's commands that make sense in an editor, and the skills, announced with
``available_commands_update`` (each with its one-line help and input hint); a prompt ``/name args`` runs the
command, as in the app. Commands that only the terminal has (keys, themes, the clipboard, its pickers) and
those an editor does itself (new, resume, model: its session and model menus) are not offered.

The table is data (``EDITOR_COMMANDS``); a command's answer is text sent as the agent's message, a skill's
is a turn with freeact's ``<skill>`` prompt."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from freeact_tui.agent.agent import Agent
from freeact_tui.project.skills import Skill, available_skills, skill_prompt


@dataclass(frozen=True)
class EditorCommand:
    name: str
    description: str
    """The one-line help (the app's words)."""
    hint: str = ""
    """What the argument is, shown as the input hint (empty: no argument)."""


EDITOR_COMMANDS: tuple[EditorCommand, ...] = (
    EditorCommand(
        "compact", "Summarise the older turns now to free context", "what to keep in focus (optional)"
    ),
    EditorCommand("context", "Show what fills the model's context window"),
    EditorCommand("skills", "List the skills the agent can read (.freeact/skills, .agents/skills)"),
    EditorCommand("help", "List these commands"),
)
_BY_NAME = {c.name: c for c in EDITOR_COMMANDS}


def _entry(name: str, description: str, hint: str) -> AvailableCommand:
    given = AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None
    return AvailableCommand(name=name, description=description, input=given)


def skills_of(agent: Agent) -> list[Skill]:
    settings = agent.runtime.settings
    return available_skills(settings.working_dir, trusted=settings.project_trusted)


def available_commands(skills: list[Skill]) -> list[AvailableCommand]:
    """The commands announced: the editor commands, then a skill per skill (a command's name wins)."""
    entries = [_entry(c.name, c.description, c.hint) for c in EDITOR_COMMANDS]
    entries += [
        _entry(s.name, f"Skill: {' '.join(s.description.split())}", "the task for the skill")
        for s in skills
        if s.name not in _BY_NAME
    ]
    return entries


@dataclass(frozen=True)
class CommandLine:
    name: str
    args: str


def command_line(text: str, names: set[str]) -> CommandLine | None:
    """``/name args`` when ``name`` is a command or skill here; anything else (``/usr/bin …``) is a prompt."""
    if not text.startswith("/"):
        return None
    head, _, args = text[1:].partition(" ")
    name = head.strip()
    return CommandLine(name, args.strip()) if name in names else None


Say = Callable[[str], Awaitable[None]]


async def run_command(agent: Agent, line: CommandLine, say: Say) -> None:
    """Run an editor command (not a skill: that is a turn, ``skill_prompt``); its answer goes to ``say``."""
    match line.name:
        case "compact":
            from freeact_tui.agent.context.compaction import CompactionError

            try:
                done = await agent.compact(line.args or None)
            except CompactionError as exc:
                await say(f"Compaction failed: {exc}")
                return
            if done is None:
                await say("There is too little to compact yet.")
            else:
                await say(
                    f"Compacted {done.replaced} messages into a summary: "
                    f"about {done.tokens_before:,} → {done.tokens_after:,} tokens."
                )
        case "context":
            usage, parts = agent.context_usage(), agent.context_breakdown()
            share = f" ({100 * usage.used / usage.window:.0f} %)" if usage.window else ""
            await say(
                f"Context: about {usage.used:,} of {usage.window:,} tokens{share}.\n\n"
                f"- system prompt: {parts.system:,}\n- tool definitions: {parts.tools:,}\n"
                f"- conversation: {parts.history:,}\n- tool results: {parts.tool_results:,}\n"
                f"- images: {parts.images:,}"
            )
        case "skills":
            skills = await asyncio.to_thread(skills_of, agent)
            listed = "\n".join(f"- `/{s.name}`: {' '.join(s.description.split())}" for s in skills)
            await say(listed or "No skills.")
        case "help":
            skills = await asyncio.to_thread(skills_of, agent)
            await say(
                "\n".join(
                    f"- `/{c.name}{' ' + c.input.root.hint if c.input else ''}`: {c.description}"
                    for c in available_commands(skills)
                )
            )


__all__ = [
    "EDITOR_COMMANDS",
    "CommandLine",
    "EditorCommand",
    "available_commands",
    "command_line",
    "run_command",
    "skill_prompt",
    "skills_of",
]
