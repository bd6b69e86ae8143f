"""#29: "Always allow" on code saves the exact cell, so two different cells never share an always-rule.

A prefix rule on Python was a bypass (``from pathlib import Path*`` allowed any code after that line).
The proposal is now ``cell:<fingerprint>``; a typed code pattern is broad and needs a second Enter.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Input, Label

from freeact_tui.agent.agent import Agent
from freeact_tui.events import ApprovalRequest, Decision
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.permissions.patterns import proposed_pattern
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.project import paths
from freeact_tui.toolcalls import CodeAction, ShellScript
from freeact_tui.tui.screens.approval import ApprovalScreen
from tests.scripted import Code, script

DIFFERENT = [
    (
        "from pathlib import Path\nPath('out.txt').write_text('ok')",
        "from pathlib import Path\nPath('junk').write_text('x')",
    ),
    ("import os\nprint(os.getcwd())", "import os\nprint(os.getcwd())\nos.remove('data.csv')"),
    ("print('hello')", "print('hello'); import shutil; shutil.rmtree('src')"),
    ("x = 1\nif x:\n    print(x)\nprint('done')", "x = 1\nif x:\n    print(x)\n    print('done')"),
    ("print('a b')", "print('a  b')"),
    ("!ls -la", "!ls -la\n!rm -rf build"),
    ("!echo hi", "!echo hi; rm x"),
    ("", "import os"),
]
SAME = [
    ("print(1)", "print(1)  # again\n\n"),
    ("x = [1,\n     2]", "x = [1, 2]"),
    ("!ls -la  \n\n", "!ls -la"),
]


@pytest.fixture
def rules(tmp_path: Path) -> PermissionRules:
    return PermissionRules(paths.permissions_file(), defaults=False, working_dir=tmp_path)


@pytest.mark.parametrize(("seen", "other"), DIFFERENT + [(b, a) for a, b in DIFFERENT])
def test_two_different_cells_never_share_an_always_rule(
    rules: PermissionRules, seen: str, other: str
) -> None:
    rules.add("code", proposed_pattern(CodeAction(seen)), scope="always")
    rules.add("script", proposed_pattern(ShellScript(seen)), scope="always")
    reread = PermissionRules(paths.permissions_file(), defaults=False, working_dir=rules.working_dir)
    for r in (rules, reread):
        assert r.check(CodeAction(seen)) == "allow"
        assert r.check(CodeAction(other)) == "ask"
        assert r.check(ShellScript(other)) == "ask"


@pytest.mark.parametrize(("seen", "same"), SAME)
def test_the_same_cell_written_differently_keeps_its_rule(
    rules: PermissionRules, seen: str, same: str
) -> None:
    rules.add("code", proposed_pattern(CodeAction(seen)), scope="always")
    assert rules.check(CodeAction(same)) == "allow"


@pytest.mark.kernel
@pytest.mark.asyncio(loop_scope="module")
async def test_an_always_allowed_cell_does_not_let_the_next_cell_through(
    executor: KernelExecutor, tmp_path: Path
) -> None:
    junk = tmp_path / "junk.txt"
    first = "from pathlib import Path\nprint(Path('.').name)"
    second = f"from pathlib import Path\nPath({str(junk)!r}).write_text('x')"
    s = script([Code(first)], [Code(second, call_id="c2")], ["ok"])
    rules = PermissionRules(paths.permissions_file(), defaults=False, working_dir=tmp_path)
    asked: list[str] = []
    agent = Agent(
        s.model(), sessions_dir=tmp_path / "s", working_dir=tmp_path, executor=executor, permissions=rules
    )
    async with agent:
        async for event in agent.stream("go"):
            if isinstance(event, ApprovalRequest) and not event.decided:
                asked.append(event.tool_call.subject)
                call = event.tool_call
                # the first: "always allow" with the dialog's proposal; the second: rejected
                if call.subject == first:
                    event.approve(True, remember="always", pattern=proposed_pattern(call))
                else:
                    event.approve(False)
    assert asked == [first, second]  # the second cell was asked, not allowed by the first one's rule
    assert not junk.exists()


class DialogHost(App[None]):
    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__()
        self.request = request
        self.decision: Decision | None = None

    def on_mount(self) -> None:
        self.push_screen(ApprovalScreen(self.request), callback=self._done)

    def _done(self, decision: Decision | None) -> None:
        self.decision = decision


@pytest.mark.asyncio(loop_scope="module")
async def test_the_dialog_proposes_the_exact_cell_and_a_typed_prefix_is_broad() -> None:
    code = "from pathlib import Path\nPath('out.txt').write_text('ok')"
    app = DialogHost(ApprovalRequest(CodeAction(code), agent_id="main"))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("a")
        field = app.screen.query_one("#approval-pattern", Input)
        assert field.value == proposed_pattern(CodeAction(code)) and field.value.startswith("cell:")
        note = app.screen.query_one("#approval-breadth", Label)
        assert "only this exact cell" in str(note.render()) and not note.has_class("-broad")
        assert "Saved for this folder only" in str(note.render())  # a cell's files are its folder's (#42)
        field.value = "from pathlib import Path*"
        await pilot.pause()
        assert note.has_class("-broad") and "whatever code follows" in str(note.render())
        await pilot.press("enter")
        await pilot.pause()
        assert app.decision is None  # the first Enter only warns
        await pilot.press("enter")
        await pilot.pause()
    assert app.decision == Decision(True, remember="always", pattern="from pathlib import Path*")
