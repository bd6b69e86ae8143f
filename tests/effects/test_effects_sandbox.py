"""The sandboxed-auto mode with a real bubblewrap sandbox (#42): code runs unasked, and the sandbox,
not the reading of the code, keeps it in (writes outside the folder stay off the host)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from freeact_tui.agent.agent import Agent
from freeact_tui.effects.modes import ApprovalMode
from freeact_tui.events import ApprovalRequest, CodeExecutionOutput
from tests.execution.test_sandbox import needs_tools
from tests.scripted import Code, script

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(180)]


@needs_tools
async def test_sandboxed_auto_runs_code_unasked_and_the_sandbox_keeps_it_in(tmp_path: Path) -> None:
    assert shutil.which("bwrap")
    work = tmp_path / "work"
    work.mkdir()
    outside = tmp_path / "outside.txt"
    # Code the reading cannot vouch for (a program, a write outside): in this mode it is not asked.
    code = (
        "!echo from-a-program\n"
        "open('made.txt', 'w').write('ok')\n"
        f"open({str(outside)!r}, 'w').write('x')\n"
        "open('/root/escape.txt', 'w')"
    )
    s = script([Code(code)], ["Done."])
    undecided: list[ApprovalRequest] = []
    decided: list[ApprovalRequest] = []
    outputs: list[CodeExecutionOutput] = []
    async with Agent(
        s.model(),
        execution="sandbox",
        working_dir=work,
        sessions_dir=tmp_path / "sessions",
        enable_subagents=False,
    ) as agent:
        assert agent.permissions.sandboxed
        agent.permissions.mode = ApprovalMode.SANDBOXED_AUTO
        async for event in agent.stream("write files"):
            if isinstance(event, ApprovalRequest):
                if event.decided:
                    decided.append(event)
                else:
                    undecided.append(event)
                    event.approve(False)
            elif isinstance(event, CodeExecutionOutput):
                outputs.append(event)
    assert undecided == []  # nothing was asked
    assert decided and all(r.decision is not None and r.decision.approved for r in decided)
    [output] = outputs
    assert "from-a-program" in (output.text or "")
    assert "Read-only file system: '/root/escape.txt'" in (output.text or "")
    assert (work / "made.txt").read_text() == "ok" and not outside.exists()  # the sandbox kept it in


async def test_sandboxed_auto_is_not_offered_without_the_sandbox(tmp_path: Path) -> None:
    from freeact_tui.effects.modes import modes

    s = script(["Hi."])
    agent = Agent(s.model(), working_dir=tmp_path, sessions_dir=tmp_path / "sessions", enable_subagents=False)
    assert not agent.permissions.sandboxed
    assert ApprovalMode.SANDBOXED_AUTO not in modes(sandboxed=agent.permissions.sandboxed)
