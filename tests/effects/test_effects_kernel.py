"""Readings vouch for code only while every cell that ran in the kernel was read fully (#42, round 3).

The class of defect: the reading judges a cell by its text, but the kernel is stateful; an earlier cell
the user approved by hand may have changed what a later cell's names, imports or syntax mean by means
no reading follows (``exec``, ``setattr(builtins, …)``, ``sys.modules``, a monkeypatch, an audit hook,
an IPython magic or input transformer). Each pair below runs through the real ``Agent`` on a real
kernel (scripted model): the innocent cell first runs unasked by the ``effects:in-folder`` rule (so the
test can fail), the poisoning cell is approved by hand, and then the same innocent cell must ask, saying
why. A reset of the kernel restores trust. The poisoning cells are real, and harmless to the module's
kernel (identity transformers, hooks that do nothing).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from freeact_tui.effects.ledger import LOST, RESET_HINT, KernelLedger
from freeact_tui.effects.modes import ApprovalMode
from freeact_tui.events import ApprovalRequest, ToolOutput
from freeact_tui.execution.kernel.executor import KernelExecutor
from freeact_tui.permissions.cells import cell_pattern
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.toolcalls import RESET_TOOL, CodeAction, ShellAction
from tests import helpers
from tests.scripted import Call, Code, script

pytestmark = [pytest.mark.kernel]
on_kernel = pytest.mark.asyncio(loop_scope="module")
executor = helpers.kernel

INNOCENT = "open('zz_note.txt', 'w').write(str(len('abc')))"

POISONING = [
    "exec('zz_a = 1')",
    "globals()['zz_b'] = len",
    "import builtins\nsetattr(builtins, 'zz_c', len)",
    "__builtins__.__dict__.setdefault('zz_d', 1)",
    "import sys, json\nsys.modules['zz_mod'] = json",
    "import importlib, json\nimportlib.reload(json)",
    "import os.path\nos.path.join = os.path.join",
    "import atexit\natexit.register(len, 'x')",
    "import sys\nsys.setprofile(None)\nsys.settrace(None)",
    "import sys\nsys.addaudithook(lambda *args: None)",
    "get_ipython().register_magic_function(lambda line: None, magic_name='zz_magic')",
    "get_ipython().input_transformers_cleanup.append(lambda lines: lines)",
    "import ast\nclass Same(ast.NodeTransformer):\n    pass\nget_ipython().ast_transformers.append(Same())",
    "%alias zz_alias echo hi",
    "%autocall 0",
    "for print in []:\n    pass",
]


@on_kernel
@pytest.mark.parametrize("poison", POISONING)
async def test_after_a_cell_the_reading_cannot_follow_an_innocent_cell_asks(
    poison: str, executor: KernelExecutor, tmp_path: Path
) -> None:
    work = Path(executor.working_dir)
    rules = PermissionRules(None, defaults=False, working_dir=work)
    rules.add("code", "effects:in-folder", scope="session")
    s = script(
        [Code(INNOCENT, call_id="c1")],
        ["first"],
        [Code(poison, call_id="c2")],
        ["second"],
        [Code(INNOCENT, call_id="c3")],
        ["third"],
    )
    agent = helpers.make_agent(s, executor, tmp_path, work, permissions=rules, enable_subagents=False)
    asked: dict[str, ApprovalRequest] = {}

    def decide(request: ApprovalRequest) -> bool:  # called for the requests no rule decided
        asked.setdefault(request.corr_id, request)
        return request.corr_id == "c2"  # the poisoning cell, approved by hand

    async with agent:
        for prompt in ("one", "two", "three"):
            await helpers.run(agent, prompt, decide)
    assert (work / "zz_note.txt").read_text() == "3"
    assert "c1" not in asked, "the innocent cell runs unasked in a fresh kernel"
    assert "c2" in asked, "the poisoning cell itself is asked"
    later = asked.get("c3")
    assert later is not None, poison
    assert LOST in later.effects and RESET_HINT in later.effects
    assert later.effect_class is None  # the dialog offers no effect class for it


@on_kernel
async def test_the_in_folder_mode_stops_too(executor: KernelExecutor, tmp_path: Path) -> None:
    work = Path(executor.working_dir)
    rules = PermissionRules(None, defaults=False, working_dir=work)
    rules.mode = ApprovalMode.IN_FOLDER
    s = script([Code("exec('zz_e = 2')", call_id="p")], ["poisoned"], [Code(INNOCENT, call_id="i")])
    agent = helpers.make_agent(s, executor, tmp_path, work, permissions=rules, enable_subagents=False)
    async with agent:
        await helpers.run(agent, "one")
        events = await helpers.run(agent, "two", lambda r: False)
    innocent = [e for e in helpers.of(events, ApprovalRequest) if e.corr_id == "i"]
    decision = innocent[0].decision if innocent else None
    assert decision is not None and not decision.approved and not decision.by_rule  # asked, rejected by hand
    assert LOST in innocent[0].effects


@on_kernel
async def test_a_reset_of_the_kernel_restores_trust(executor: KernelExecutor, tmp_path: Path) -> None:
    work = Path(executor.working_dir)
    rules = PermissionRules(None, defaults=False, working_dir=work)
    rules.add("code", "effects:in-folder", scope="session")
    s = script(
        [Code("exec('zz_f = 3')", call_id="p")],
        ["poisoned"],
        [Code(INNOCENT, call_id="i1")],  # rejected: the turn ends there
        [Call(RESET_TOOL, {}, call_id="r")],
        ["reset"],
        [Code(INNOCENT, call_id="i2")],
        ["trusted again"],
    )
    agent = helpers.make_agent(s, executor, tmp_path, work, permissions=rules, enable_subagents=False)
    async with agent:
        await helpers.run(agent, "poison")
        first = await helpers.run(agent, "innocent", lambda r: False)
        reset = await helpers.run(agent, "reset")
        second = await helpers.run(agent, "innocent again", lambda r: False)
    asked = [e for e in helpers.of(first, ApprovalRequest) if e.corr_id == "i1"]
    assert asked and asked[0].decision is not None and not asked[0].decision.by_rule
    assert any(o.content.startswith("The kernel was reset") for o in helpers.of(reset, ToolOutput))
    again = [e for e in helpers.of(second, ApprovalRequest) if e.corr_id == "i2"]
    assert again and again[0].decision is not None and again[0].decision.by_rule and again[0].decision.approved
    assert LOST not in again[0].effects


def test_a_restart_keeps_what_was_approved_and_has_not_run_yet(tmp_path: Path) -> None:
    """A cell approved before a restart runs in the new kernel: its note survives the restart."""
    ledger = KernelLedger(tmp_path)
    ledger.ran(CodeAction("exec('x = 1')"), "done")
    ledger.finished("done")
    ledger.ran(CodeAction("exec('y = 1')"), "waiting")  # approved, waits for the kernel's lock
    ledger.restarted()
    assert ledger.lost is not None and LOST in ledger.lost  # the waiting cell still poisons the new kernel
    ledger.finished("waiting")
    ledger.restarted()
    assert ledger.lost is None and ledger.rebound == frozenset()
    ledger.ran(CodeAction("exec('z = 1')"), "cancelled")  # its turn was cancelled: never finished
    ledger.restarted()
    assert ledger.lost is not None
    ledger.settle()  # the next turn starts: nothing waits any more
    ledger.restarted()
    assert ledger.lost is None
    ledger.ran(CodeAction("print = len"), "r")
    assert ledger.rebound == {"print"} and ledger.lost is not None


def test_exact_cell_and_program_rules_keep_working_when_readings_are_not_trusted(tmp_path: Path) -> None:
    rules = PermissionRules(None, defaults=False, working_dir=tmp_path)
    rules.add("code", "effects:in-folder", scope="session")
    cell = CodeAction(INNOCENT)
    rules.note_ran(CodeAction("exec('x = 1')"))
    assert rules.check(cell) == "ask"
    rules.add("code", cell_pattern(cell.code), scope="session")  # this very cell
    assert rules.check(cell) == "allow"


def test_the_built_in_allow_list_vouches_for_nothing_a_poisoned_kernel_runs(tmp_path: Path) -> None:
    """``!ls`` is allowed by the built-in rules; in a kernel whose ``system`` may be patched, it asks, and
    so do the in-folder mode's file operations; the user's own rule for it keeps working."""
    from freeact_tui.effects.modes import judge
    from freeact_tui.toolcalls import FileRead, JsonToolCall

    rules = PermissionRules(None, working_dir=tmp_path)
    ledger = KernelLedger(tmp_path)
    ls = ShellAction("ls")
    assert rules.check(ls, kernel=ledger) == "allow"
    ledger.ran(CodeAction("get_ipython().system = print"), "p")
    assert rules.check(ls, kernel=ledger) == "ask"
    assert rules.check(JsonToolCall("search", {"q": "x"}), kernel=ledger) == "ask"  # not the kernel's: as before
    read = FileRead("a.txt")
    kw = {"rule": None, "sandboxed": False, "working_dir": tmp_path}
    assert judge(ApprovalMode.IN_FOLDER, read, None, trusted=True, **kw) is not None  # type: ignore[arg-type]
    assert judge(ApprovalMode.IN_FOLDER, read, None, trusted=False, **kw) is None  # type: ignore[arg-type]
    rules.add("shell", "ls", scope="session")  # the user's own rule
    assert rules.check(ls, kernel=ledger) == "allow"


@on_kernel
async def test_a_shell_command_the_defaults_allow_asks_after_poisoning(executor: KernelExecutor, tmp_path: Path) -> None:
    work = Path(executor.working_dir)
    rules = PermissionRules(None, working_dir=work)  # with the built-in read-only allow-list
    s = script(
        [Code("!ls", call_id="l1")],
        ["listed"],
        [Code("exec('zz_g = 1')", call_id="p")],
        ["poisoned"],
        [Code("!ls", call_id="l2")],
    )
    agent = helpers.make_agent(s, executor, tmp_path, work, permissions=rules, enable_subagents=False)
    asked: list[ApprovalRequest] = []

    def decide(request: ApprovalRequest) -> bool:
        asked.append(request)
        return request.corr_id == "p"

    async with agent:
        for prompt in ("one", "two", "three"):
            await helpers.run(agent, prompt, decide)
    assert [r.corr_id for r in asked] == ["p", "l2"]  # `!ls` ran unasked before, and asks after
    assert LOST in asked[-1].effects and asked[-1].tool_call == ShellAction("ls", full_command="ls")
