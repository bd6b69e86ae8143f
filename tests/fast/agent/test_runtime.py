"""The runtime is frozen: what a turn learns (the MCP APIs) is a value the turn's opening returns, and a
subagent's runtime is derived from its parent as the parent is when the task starts. No kernel."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai.messages import ModelRequest, SystemPromptPart

import freeact_tui
from freeact_tui.agent.agent import Agent
from freeact_tui.agent.runtime import SUBAGENT, McpApis
from freeact_tui.permissions.rules import PermissionRules

PACKAGE = Path(freeact_tui.__file__).parent
API = McpApis("The `calc` package: add(a, b) -> int.", {"calc": {"command": "calc-mcp", "timeout": 5.0}})


def _agent(tmp_path: Path) -> Agent:
    return Agent("test", working_dir=tmp_path, sessions_dir=tmp_path / "s", eager_kernel=False)


def test_a_runtime_cannot_be_changed(tmp_path: Path) -> None:
    runtime = _agent(tmp_path).runtime
    with pytest.raises(dataclasses.FrozenInstanceError):
        runtime.permissions = PermissionRules(None)  # type: ignore[misc]


def test_no_module_writes_into_a_runtime() -> None:
    """``x.runtime.field = …`` or ``runtime.field = …`` nowhere: a change makes a new runtime (``replace``)."""
    written = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign | ast.AnnAssign) else []
            for target in targets:
                if isinstance(target, ast.Attribute):
                    owner = target.value
                    name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
                    if name in ("runtime", "_runtime"):
                        written.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert written == []


async def test_the_opening_returns_what_the_turn_learned(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    learned = await agent.opening(API, "What is 2 + 3?")
    assert learned == API  # no servers of its own: what it knew stays
    assert agent.apis == McpApis() and agent.runtime.apis == McpApis()  # returned, not written anywhere
    request = agent.history[0]
    assert isinstance(request, ModelRequest) and isinstance(request.parts[0], SystemPromptPart)
    assert API.description is not None and API.description in request.parts[0].content


def test_a_subagent_gets_what_its_parent_has_when_the_task_starts(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    started = agent.runtime
    rules = PermissionRules(None, skip_permissions=True)
    agent.permissions = rules  # the user changed the rules during the session
    agent.apis = API  # a turn learned the MCP APIs
    executor: Any = object()  # stored, never used here
    sub = agent._subagent_runtime("sub-0001", executor, "call-1")
    assert (sub.agent_id, sub.parent_corr_id, sub.executor) == ("sub-0001", "call-1", executor)
    assert sub.permissions is rules and sub.apis == API and sub.checkpointing is agent.checkpointing
    assert not sub.subagents_enabled and sub.settings.mcp_servers == {} and sub.role is SUBAGENT
    assert agent.runtime.permissions is rules and started.permissions is not rules  # a new runtime, explicitly


_servers = st.none() | st.dictionaries(st.text(max_size=5), st.just({"command": "x"}), max_size=2)
_apis = st.builds(McpApis, st.none() | st.text(max_size=8), _servers)


@given(_apis, _apis)
def test_what_a_turn_learned_wins_and_what_it_did_not_learn_stays(known: McpApis, learned: McpApis) -> None:
    after = known.after(learned)
    assert after.description == (learned.description or known.description)
    assert after.ptc_servers == (known.ptc_servers if learned.ptc_servers is None else learned.ptc_servers)
    assert known.after(McpApis()) == known
