"""MCP servers through the agent: a generated API called from a code action, and a JSON tool call."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from freeact_tui.agent.agent import Agent
from freeact_tui.events import AgentError, AgentEvent, ApprovalRequest, CodeExecutionOutput, ToolOutput
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.project.config import McpServerConfig
from freeact_tui.toolcalls import JsonToolCall, ProgrammaticToolCall
from tests.scripted import Call, Code, script

pytestmark = pytest.mark.kernel
SERVERS = Path(__file__).parents[1] / "mcp_servers"


def calc(mode: str) -> McpServerConfig:
    return McpServerConfig(command=sys.executable, args=[str(SERVERS / "calc.py")], mode=mode)  # type: ignore[arg-type]


async def test_generated_api_and_json_tool_through_the_agent(tmp_path: Path) -> None:
    s = script(
        [Code("from mcptools.calc import add\nprint(add.run(add.Params(a=2, b=3)).result)")],
        [Call("calcjson_add", {"a": 20, "b": 22}, call_id="c2")],
        ["both worked"],
    )
    servers = {
        "calc": calc("ptc"),
        "calcjson": calc("json"),
        "broken": McpServerConfig(command=sys.executable, args=[str(SERVERS / "broken.py")], mode="json"),
    }
    agent = Agent(
        s.model(),
        working_dir=tmp_path,
        mcp_servers=servers,
        permissions=PermissionRules(None, defaults=False),
        enable_subagents=False,
    )
    events: list[AgentEvent] = []
    async with agent:
        async for event in agent.stream("add numbers"):
            events.append(event)
            if isinstance(event, ApprovalRequest) and not event.decided:
                event.approve(True)
    calls = [e.tool_call for e in events if isinstance(e, ApprovalRequest)]
    assert ProgrammaticToolCall("calc", "add", {"a": 2, "b": 3}) in calls
    assert JsonToolCall("calcjson_add", {"a": 20, "b": 22}) in calls
    assert [e.text for e in events if isinstance(e, CodeExecutionOutput)] == ["5"]
    assert [e.content for e in events if isinstance(e, ToolOutput)] == ["42"]
    # the model was told about the generated API and offered the JSON tool
    system = s.requests[0][0].parts[0].content  # type: ignore[union-attr]
    assert "from mcptools.calc import add" in system
    assert "calcjson_add" in [t.name for t in s.infos[0].function_tools]
    # the broken server is reported once, clearly, and did not stop the turn
    problems = [e.message for e in events if isinstance(e, AgentError)]
    assert len(problems) == 1 and "broken" in problems[0]
