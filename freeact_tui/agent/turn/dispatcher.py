"""The dispatcher a turn runs its actions through, wired to one agent's parts."""

from __future__ import annotations

from collections.abc import Callable

from freeact_tui.actions.code import ActionOutcome
from freeact_tui.actions.dispatch import Dispatcher, SubagentRunner
from freeact_tui.actions.files import FileToolOptions
from freeact_tui.actions.ports import TurnPorts
from freeact_tui.agent.runtime import McpApis, Runtime
from freeact_tui.agent.subagents import SubagentManager
from freeact_tui.agent.turn.budget import RequestBudget
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
    budget: RequestBudget,
) -> Dispatcher:
    """A dispatcher for one turn (the MCP servers code may call are known once the turn has opened:
    ``apis`` gives what the agent knows when the kernel is used); a subagent it starts makes its
    requests from the turn's ``budget``."""
    checkpoint = checkpointing.hook(runtime.agent_id)

    def pin(executor: Executor) -> None:
        # Read when the kernel is used: the turn's opening learns them after this dispatcher is built.
        ptc = apis().ptc_servers
        if ptc is not None:  # the kernel's tool server serves the configured MCP servers only
            executor.set_mcp_servers(ptc)

    return Dispatcher(
        ports,
        json_tools=mcp,
        subagents=_within(subagents, emit, budget) if subagents is not None else None,
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


def _within(
    subagents: SubagentManager, emit: Callable[[AgentEvent], None], budget: RequestBudget
) -> SubagentRunner:
    """Runs a subagent with at most the requests the turn has left, and spends what it made."""

    async def run(prompt: str, max_turns: int, corr: str) -> ActionOutcome:
        if budget.left <= 0:
            return ActionOutcome(
                "Not run: this turn's model requests (max_model_requests) are spent.", is_error=True
            )
        return await subagents.run(prompt, min(max_turns, budget.left), corr, emit, spent=budget.spend)

    return run


__all__ = ["turn_dispatcher"]
