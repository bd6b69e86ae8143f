"""The main agent and a subagent differ by data: one ``AgentRole`` on the runtime, chosen where the runtime is
made (``resolve_runtime`` for ``Agent(...)``, ``Runtime.for_subagent`` for a subagent) and read where it
matters; ``agent.py`` no longer asks whether it is the main agent. No kernel."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import freeact_tui.agent as agent_package
from freeact_tui.agent.agent import Agent
from freeact_tui.agent.runtime import MAIN, SUBAGENT, AgentRole, Runtime
from freeact_tui.project.config import McpServerConfig
from freeact_tui.store.index import read_meta

AGENT_DIR = Path(agent_package.__file__).parent

# (capability, the main agent, a subagent): the table the roles must be.
CAPABILITIES = [
    ("connects_mcp_servers", True, False),
    ("takes_checkpoint_notes", True, False),
    ("owns_checkpoints", True, False),
    ("counts_subagent_usage", True, False),
    ("writes_session_meta", True, False),
    ("starts_subagents", True, False),
]


def test_the_table_names_every_capability() -> None:
    fields = {f.name for f in dataclasses.fields(AgentRole)} - {"name"}
    assert {row[0] for row in CAPABILITIES} == fields


@pytest.mark.parametrize(("capability", "main", "subagent"), CAPABILITIES)
def test_each_role_has_its_capabilities(capability: str, main: bool, subagent: bool) -> None:
    assert (getattr(MAIN, capability), getattr(SUBAGENT, capability)) == (main, subagent)


@given(
    agent_id=st.sampled_from(["main", "sub-0001", "helper"]) | st.text(min_size=1, max_size=8),
    parent=st.none() | st.text(min_size=1, max_size=8),
)
def test_the_main_agent_is_main_and_started_by_nobody(agent_id: str, parent: str | None) -> None:
    assert AgentRole.of(agent_id, parent) is (MAIN if agent_id == "main" and parent is None else SUBAGENT)


def _agent(tmp_path: Path, **overrides: object) -> Agent:
    servers = {"calc": McpServerConfig(command="calc-mcp")}
    return Agent(
        "test", working_dir=tmp_path, sessions_dir=tmp_path / "s", eager_kernel=False, mcp_servers=servers, **overrides
    )


def test_each_factory_gives_its_role(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    assert agent.runtime.role is MAIN
    sub = agent._subagent_runtime("sub-0001", object(), "call-1")  # type: ignore[arg-type]
    assert sub.role is SUBAGENT and not sub.subagents_enabled
    assert _agent(tmp_path, agent_id="helper").runtime.role is SUBAGENT
    r = agent.runtime
    with pytest.raises(TypeError, match="role"):  # no default: whoever makes a runtime says its role
        Runtime(model=r.model, settings=r.settings, session_id=r.session_id, permissions=r.permissions)  # type: ignore[call-arg]


@pytest.mark.parametrize("role", [MAIN, SUBAGENT], ids=lambda r: r.name)
async def test_the_agent_does_what_its_role_says(tmp_path: Path, role: AgentRole) -> None:
    """Read where it matters: the MCP servers it connects, the subagents it may start, the metadata it writes."""
    parent = _agent(tmp_path)
    agent = Agent.from_runtime(dataclasses.replace(parent.runtime, role=role), eager_kernel=False)
    assert bool(agent.mcp.ptc) is role.connects_mcp_servers
    assert agent.enable_subagents is role.starts_subagents
    await agent.opening(agent.apis, "What is 2 + 3?")
    meta = read_meta(tmp_path / "s" / agent.session_id)  # (the title: the store's index takes it from main.jsonl)
    assert meta is not None and bool(meta.launch) is role.writes_session_meta


def test_agent_py_does_not_branch_on_being_the_main_agent() -> None:
    """No ``is_main`` (nor ``agent_id == "main"``) in the agent or its turns: they read the role's capabilities."""
    found = []
    for path in [AGENT_DIR / "agent.py", AGENT_DIR / "runtime.py", *sorted((AGENT_DIR / "turn").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute | ast.Name) and "is_main" in (getattr(node, "attr", None), getattr(node, "id", None)):
                found.append(f"{path.name}:{node.lineno}")
            if isinstance(node, ast.Compare) and any(
                isinstance(c, ast.Constant) and c.value == "main" for c in [node.left, *node.comparators]
            ) and path.name != "runtime.py":
                found.append(f"{path.name}:{node.lineno}")
    assert found == []
