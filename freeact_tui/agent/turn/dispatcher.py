"""The dispatcher a turn runs its actions through, wired to one agent's parts."""

from __future__ import annotations

from collections.abc import Callable

from freeact_tui.actions.dispatch import Dispatcher
from freeact_tui.actions.files import FileToolOptions
from freeact_tui.actions.ports import TurnPorts
from freeact_tui.agent.runtime import McpApis, Runtime
from freeact_tui.agent.subagents import SubagentManager
from freeact_tui.checkpoints.checkpointing import Checkpointing
from freeact_tui.events import AgentEvent
from freeact_tui.execution.base import Executor
from freeact_tui.mcp.setup import McpSetup


def turn_dispatcher(
    ports: TurnPorts,
    runtime: Runtime,
    mcp: McpSetup,
    checkpointing: Checkpointing,
    subagents: SubagentManager | None,
    emit: Callable[[AgentEvent], None],
    apis: Callable[[], McpApis],
) -> Dispatcher:
    """A dispatcher for one turn (the MCP servers code may call are known once the turn has opened:
    ``apis`` gives what the agent knows when the kernel is used)."""
    checkpoint = checkpointing.hook(runtime.agent_id)

    def pin(executor: Executor) -> None:
        # Read when the kernel is used: the turn's opening learns them after this dispatcher is built.
        ptc = apis().ptc_servers
        if ptc is not None:  # the kernel's tool server serves the configured MCP servers only
            executor.set_mcp_servers(ptc)

    return Dispatcher(
        ports,
        json_tools=mcp,
        subagents=(lambda p, m, c: subagents.run(p, m, c, emit)) if subagents is not None else None,
        execution_timeout=runtime.settings.execution_timeout,
        prepare_executor=pin,
        files=FileToolOptions(
            runtime.settings.working_dir,
            lambda: runtime.model.profile,
            before_write=(lambda call, corr: checkpoint([call], corr)) if checkpoint is not None else None,
            access=runtime.file_access,
        ),
        checkpoint=checkpoint,
    )


__all__ = ["turn_dispatcher"]
