"""`ipybox_reset` (freeact's tool): the model asks for a fresh kernel; it is approved like a tool call."""

from __future__ import annotations

from pathlib import Path

import pytest

from freeact_tui.agent.agent import Agent
from freeact_tui.events import ApprovalRequest, CodeExecutionOutput, ToolOutput
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.toolcalls import RESET_TOOL, JsonToolCall
from tests.scripted import Call, Code, script


@pytest.mark.kernel
async def test_the_model_can_reset_the_kernel_after_approval(tmp_path: Path) -> None:
    (tmp_path / "kept.txt").write_text("files stay")
    s = script(
        [Code("x = 41\nprint(x + 1)")],
        [Call(RESET_TOOL, {}, call_id="r1")],
        [Code("print('x' in dir(), open('kept.txt').read())", call_id="c2")],
        [Call(RESET_TOOL, {}, call_id="r2")],
        ["done"],
    )
    agent = Agent(
        s.model(),
        sessions_dir=tmp_path / "s",
        working_dir=tmp_path,
        permissions=PermissionRules(None, defaults=False),
        enable_subagents=False,
    )
    asked: list[object] = []
    outputs: list[str] = []
    tool_outputs: list[tuple[str, bool]] = []
    async with agent:
        async for event in agent.stream("go"):
            match event:
                case ApprovalRequest(tool_call=call) if not event.decided:
                    asked.append(call)
                    event.approve(event.corr_id != "r2")  # the second reset is rejected
                case CodeExecutionOutput(text=text):
                    outputs.append(text or "")
                case ToolOutput(content=content, is_error=is_error):
                    tool_outputs.append((content, is_error))
    assert outputs == ["42", "False files stay"]  # the variable went, the file stayed
    assert JsonToolCall(RESET_TOOL, {}) in asked
    assert tool_outputs[0][0].startswith("The kernel was reset") and not tool_outputs[0][1]
    returns = [
        p for m in agent.history for p in getattr(m, "parts", []) if getattr(p, "tool_call_id", "") == "r2"
    ]
    assert any(
        "rejected" in str(getattr(p, "content", "")).lower() for p in returns
    )  # a rejection ends the turn
    assert RESET_TOOL in [t.name for t in s.infos[0].function_tools]
