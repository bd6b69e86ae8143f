"""``/context``, ``/compact``, ``/permissions``, ``/skills`` and ``/export``: the slash
commands that show or write out what the app holds, without changing the session or the agent.

Each function takes the chat screen (``MainScreen``: the app's state through ``chat.host``, see
``tui/screens/chat_host.py``) and reports in its conversation log, a notification or a screen of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from freeact_tui.project import paths
from freeact_tui.reach import probe
from freeact_tui.text.safe import one_line
from freeact_tui.tui.commands import SlashCommand
from freeact_tui.tui.context_report import context_report

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

    from freeact_tui.agent.agent import Agent
    from freeact_tui.project.config import Config
    from freeact_tui.tui.screens.main import MainScreen

async def context_command(chat: MainScreen, command: SlashCommand) -> None:
    """``/context`` (what fills the context window) or ``/compact [instructions]``."""
    if chat.agent is None:
        chat.notify("No agent yet: set a model first.", severity="warning")
    elif command.name == "context":
        await chat.conversation.notice(context_report(chat.agent), title="Context")
    else:
        chat.start_compaction(command.arg)


async def show_permissions(chat: MainScreen) -> None:
    """``/permissions``: the rules in force, on a screen of their own."""
    from freeact_tui.permissions.rules import rules_for
    from freeact_tui.tui.screens.permissions import PermissionsScreen

    # The running agent's rules (its session rules included); without an agent, the saved ones.
    rules = (
        chat.agent.permissions
        if chat.agent is not None
        else rules_for(chat.host.config.resolved_working_dir(), trusted=chat.host.config.project_trusted)
    )
    await chat.app.push_screen(PermissionsScreen(rules))


async def list_skills(chat: MainScreen) -> None:
    """``/skills``: the skills of the working directory, with where each lives."""
    from freeact_tui.project.skills import available_skills

    working_dir = chat.host.config.resolved_working_dir()
    skills = available_skills(working_dir, trusted=chat.host.config.project_trusted)
    if not skills:
        text = (
            f"No skills in {working_dir}. A skill is a directory in .freeact/skills/ or "
            ".agents/skills/ with a SKILL.md whose front matter has `name:` and `description:`."
        )
    else:
        text = "\n".join(  # plain text, made visible by the notice (once): a notice shows no markdown
            f"• {s.name} — {one_line(s.description, 100) if s.description else 'no description'}\n  {s.path}"
            for s in skills
        )
        text += "\n\nInvoke one with /<name> args (also from the @ picker: type /)."
    await chat.conversation.notice(text, title=f"Skills ({len(skills)})")


async def export(chat: MainScreen, arg: str) -> None:
    """``/export [path]``: the session as Markdown, to ``path`` (relative: to the working directory) or
    the app's data directory (``exports/``), never into the project unasked."""
    agent = chat.agent
    if agent is None or not agent.history:
        chat.notify("Nothing to export yet.", severity="warning")
        return
    try:
        target = _write_export(arg, agent.transcript, agent.session_id)
    except (OSError, ValueError) as exc:  # a NUL byte or an unencodable character in the path: one line
        chat.notify(f"Export failed: {exc}", severity="error", timeout=10)
        return
    where = "" if arg else "\n(the app's data directory, outside the project; /export PATH writes elsewhere)"
    chat.notify(f"Exported to {target}", title="Export", timeout=10)
    await chat.conversation.notice(f"Exported to {target}{where}", title="Export")


def _write_export(arg: str, messages: list[ModelMessage], session_id: str) -> Path:
    name = f"freeact-{session_id[:8]}.md"
    target = probe.expanded(arg) if arg else paths.exports_dir() / name
    if probe.is_dir(target):
        target = target / name
    from freeact_tui.store.export import render

    target = target.absolute()  # the notice names the full path, wherever the app was started
    paths.atomic_write_text(target, render(messages, "md", title=f"freeact session {session_id}"), mode=0o644)
    return target


def protocol_text(agent: Agent, config: Config) -> str:
    """What ``/model`` says: the model and the action protocol used with it, and why."""
    why = (
        "as configured: action_protocol / --action-protocol"
        if config.action_protocol != "default"
        else "chosen for this model; action_protocol in the config or --action-protocol sets it"
    )
    return f"{agent.model_name} · action protocol: {agent.action_protocol} ({why})"
