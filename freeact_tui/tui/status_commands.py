"""``/status``, ``/cost``, ``/mcp``, ``/config``, ``/init`` and ``/memory``: what the session runs with, as the
best agent terminals show it. Each report is plain text built by a function of plain values (tested
without the app), shown as a notice in the log; ``/memory`` opens ``AGENTS.md`` in the pager and
``/init`` asks the agent to write it (its writes approved like any other).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freeact_tui.project import files as projectfiles

if TYPE_CHECKING:
    from freeact_tui.agent.agent import Agent
    from freeact_tui.project.config import Config
    from freeact_tui.tui.screens.main import MainScreen

MEMORY_FILE = "AGENTS.md"

INIT_PROMPT = (
    "Look at this project (its layout, its build and test commands, its conventions: read what you need, "
    f"briefly) and write a concise {MEMORY_FILE} in the working directory for coding agents: what the project "
    "is, how to build, test and lint it, where things live, and conventions to follow. If an "
    f"{MEMORY_FILE} exists, improve it instead of starting over. Keep it short and factual."
)
"""What ``/init`` sends: the model looks and writes; the write is approved like any other."""


EMPTY = {
    "cost": "No model yet: nothing spent.",
    "mcp": "No MCP servers. Add one as [mcp_servers.NAME] in the config.",
}
"""What a report says when it has no rows."""


def rows_text(rows: list[tuple[str, str]]) -> str:
    """Aligned ``label  value`` lines: the report as copied (the log draws the rows as two columns, a long
    value wrapping in its own column)."""
    width = max((len(label) for label, _ in rows), default=0)
    return "\n".join(f"{label.ljust(width)}  {value}" for label, value in rows)


def status_rows(agent: Agent | None, config: Config, model: str | None) -> list[tuple[str, str]]:
    """``/status``: model, protocol, session, working dir, execution, trust, MCP servers, rules file."""
    from freeact_tui.permissions.rules import rules_for

    state = config.trust_state
    trust = "trusted" if state is None or state.trusted else "not trusted (project files ignored)"
    servers = sorted(name for name, server in config.mcp_servers.items() if server.enabled)
    rules = agent.permissions if agent is not None else rules_for(config.resolved_working_dir(), trusted=config.project_trusted)
    execution = config.execution + (" · skip permissions" if config.skip_permissions else "")
    return [
        ("Model", (model or "none") + (f" ({agent.model_name})" if agent and agent.model_name != model else "")),
        ("Protocol", agent.action_protocol if agent is not None else str(config.action_protocol)),
        ("Session", agent.session_id if agent is not None else "-"),
        ("Working dir", str(config.resolved_working_dir())),
        ("Execution", execution),
        ("Trust", trust),
        ("MCP servers", ", ".join(servers) if servers else "none"),
        ("Rules file", str(rules.path) if rules.path else "none (rules kept in memory)"),
    ]


def cost_rows(input_tokens: int, output_tokens: int, requests: int, cost: float | None, estimated: bool) -> list[tuple[str, str]]:
    """``/cost``: the session's tokens, requests and cost (where the provider's prices are known)."""
    note = " (some estimated: the server reported no usage)" if estimated else ""
    return [
        ("Input tokens", f"{input_tokens:,}{note}"),
        ("Output tokens", f"{output_tokens:,}"),
        ("Requests", f"{requests:,}"),
        ("Cost", f"${cost:.4f}" if cost is not None else "unknown (no prices for this model)"),
    ]


def mcp_rows(servers: Mapping[str, Any], agent: Agent | None) -> list[tuple[str, str]]:
    """``/mcp``: each configured server, its state and its tools."""
    rows: list[tuple[str, str]] = []
    mcp = agent.mcp if agent is not None else None
    apis = mcp.apis if mcp is not None else None
    failed = {e.server for e in apis.errors} if apis is not None else set()
    json_tools = mcp.json_tools if mcp is not None else None
    for name in sorted(servers):
        server = servers[name]
        if not server.enabled:
            rows.append((name, "disabled"))
            continue
        if server.mode == "ptc":
            package = _package(name)
            tools = sorted(t.tool for t in apis.tools if t.server == package) if apis is not None else []
            if name in failed:
                state = "failed (see the log's first turn)"
            elif apis is None:
                state = "starting (ready before the first model request)"
            else:
                state = f"ready · {len(tools)} tools (Python API)"
        else:
            tools = sorted(json_tools.tools_of(name)) if json_tools is not None else []
            state = f"ready · {len(tools)} tools (JSON)" if tools else "not started, failed or without tools"
        rows.append((name, state + (f": {', '.join(tools)}" if tools else "")))
    return rows


def _package(server: str) -> str | None:
    from freeact_tui.mcp.ptc import McpServerError, package_name

    try:
        return package_name(server)
    except McpServerError:
        return None


def config_rows(config: Config) -> list[tuple[str, str]]:
    """``/config``: each setting in effect and where it comes from (a file, the command line, the default).
    Tables (MCP servers, keymap, model settings) are summed up: their values may hold tokens."""
    origins = config.origins
    rows: list[tuple[str, str]] = []
    for key, value in config.model_dump().items():
        shown = f"{len(value)} entries" if isinstance(value, dict | list) else _cut(repr(value), 60)
        rows.append((key, f"{shown}  ← {origins.get(key, 'default')}"))
    return rows


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def memory_file(working_dir: Path) -> Path:
    return working_dir / MEMORY_FILE


async def show(chat: MainScreen, name: str, model: str | None) -> None:
    """Run ``/status``, ``/cost``, ``/mcp`` or ``/config`` on the chat screen (``model``: as the user named it)."""
    agent, config = chat.agent, chat.host.config
    rows: list[tuple[str, str]] = []
    match name:
        case "status":
            rows, title = status_rows(agent, config, model), "Status"
        case "cost":
            if agent is not None:
                u = agent.usage
                rows = cost_rows(u.input_tokens, u.output_tokens, u.requests, u.cost_usd, u.estimated)
            title = "Cost of this session"
        case "mcp":
            rows = mcp_rows(config.mcp_servers, agent)
            title = f"MCP servers ({len(rows)})"
        case _:
            rows, title = config_rows(config), "Config (setting · value ← where it comes from)"
    empty = EMPTY.get(name, "")
    await chat.conversation.notice(rows_text(rows) if rows else empty, title=title, rows=rows)


async def memory(chat: MainScreen) -> None:
    """``/memory``: ``AGENTS.md`` of the working directory in the pager (or how to make one)."""
    from freeact_tui.tui.screens.pager import PagerScreen

    path = memory_file(chat.host.config.resolved_working_dir())
    try:
        text = projectfiles.read_text(path, errors="replace")  # the folder's: regular and bounded only
    except FileNotFoundError:
        await chat.conversation.notice(
            f"No {MEMORY_FILE} in {path.parent}. /init asks the agent to write one.", title="Memory"
        )
        return
    except OSError as exc:
        chat.notify(f"Cannot read {path}: {exc}", severity="error")
        return
    await chat.app.push_screen(PagerScreen(str(path), text))


__all__ = ["INIT_PROMPT", "MEMORY_FILE", "config_rows", "cost_rows", "mcp_rows", "memory", "show", "status_rows"]
