"""The user's own ``!command``: recognised in a prompt, run in the agent's kernel without approval,
its output shown in the log (the next prompt to the model carries it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from freeact_tui.agent.agent import Agent
    from freeact_tui.tui.widgets.conversation import ConversationLog
    from freeact_tui.tui.widgets.status_bar import StatusBar


def shell_command(text: str) -> str | None:
    """The command of a ``!command`` prompt (``None`` for other prompts; ``!!x`` sends ``!x`` to the model)."""
    stripped = text.strip()
    if not stripped.startswith("!") or stripped.startswith("!!"):
        return None
    command = stripped[1:].strip()
    return command or None


async def show_user_shell(agent: Agent, log: ConversationLog, status_bar: StatusBar, command: str) -> None:
    """Run ``command`` in ``agent``'s kernel and stream its output into ``log``; a failure is shown there."""
    from freeact_tui.events import CodeExecutionOutput, CodeExecutionOutputChunk  # (not for the first frame)

    await log.add_user(f"!{command}")
    status_bar.set_activity("running")
    try:
        async for event in agent.run_user_shell(command):
            match event:
                case CodeExecutionOutputChunk():
                    await log.output_chunk(event)
                case CodeExecutionOutput():
                    await log.output_end(event)
    except Exception as exc:  # a kernel that cannot start must not crash the app
        await log.error(str(exc) or type(exc).__name__, title="The command could not run")
