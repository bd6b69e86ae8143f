"""Work approved beyond the folder leaves the kernel untrusted for later in-folder work (#42 F6).

The class: state a cell installs that directs LATER work — a log file outside the folder
(``logging.basicConfig(filename='/tmp/x/exfil.log')``, then an in-folder ``logging.warning(secret)``), a
program that plants a module the kernel imports later, a file tool's write to a config outside. The
cell that installs it is read fully (so the "cannot tell" ledger never lost trust) and was approved by
hand; the later cell reads as in-folder and ran unasked. The mechanism (``effects.ledger``): whatever the
kernel carries out that the app itself did not vouch for as in-folder or read-only work widens the
kernel, and until it starts again no reading of its code vouches for it (neither the mode nor an
``effects:`` rule). Generated over a corpus of wider cells and of in-folder ones.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freeact_tui.actions.ports import EventPorts
from freeact_tui.agent.approvals import ApprovalGate
from freeact_tui.effects import read_effects
from freeact_tui.effects.ledger import WIDENED, KernelLedger
from freeact_tui.effects.modes import ApprovalMode
from freeact_tui.events import ApprovalRequest
from freeact_tui.permissions.rules import PermissionRules
from freeact_tui.toolcalls import CodeAction, FileWrite, ShellAction

FOLDER = Path("/tmp/fixeff8-widened-folder")

WIDER = [
    "import logging\nlogging.basicConfig(filename='/tmp/x/exfil.log', format='%(message)s')",
    "open('/tmp/x/out.txt', 'w').write('x')",
    "import shutil\nshutil.copy('notes.txt', '/tmp/x/')",
    "import subprocess\nsubprocess.run(['ls'])",
    "import os\nos.system('ls')",
    "import urllib.request\nurllib.request.urlopen('http://example.org')",
    "import os\nprint(os.getenv('HOME'))",
    "open('/tmp/x/a.py', 'w').write('x')\nprint(1)",
    "!pip install x\nprint(1)",
]
IN_FOLDER = [
    "print(1 + 1)",
    "open('notes.txt').read()",
    "open('out.txt', 'w').write('x')",
    "import numpy as np\nnp.save('data', np.zeros(2))",
    "import logging\nlogging.basicConfig(filename='app.log')",
    "import json\nprint(json.dumps({'a': 1}))",
]
LATER = ["import logging\nsecret = open('notes.txt').read()\nlogging.warning(secret)", "print(1)", "open('n.txt', 'w').write('x')"]


@pytest.fixture(autouse=True, scope="module")
def _folder() -> Iterator[None]:
    FOLDER.mkdir(exist_ok=True)
    (FOLDER / "notes.txt").write_text("x")
    yield
    shutil.rmtree(FOLDER, ignore_errors=True)


def _rules() -> PermissionRules:
    rules = PermissionRules(None, defaults=False, working_dir=FOLDER)
    rules.add("code", "effects:in-folder", scope="session")
    return rules


@settings(max_examples=60, deadline=None)
@given(first=st.sampled_from(WIDER), later=st.sampled_from(LATER))
def test_after_work_approved_beyond_the_folder_no_later_cell_runs_as_in_folder(first: str, later: str) -> None:
    assert read_effects(CodeAction(first), FOLDER).effect_class not in ("computes", "reads", "in-folder")
    ledger = KernelLedger(FOLDER)
    rules = _rules()
    assert rules.check(CodeAction(later), kernel=ledger) == "allow"
    ledger.ran(CodeAction(first), "by-hand")
    assert ledger.lost is None and ledger.widened is not None and WIDENED in ledger.widened
    assert ledger.read(CodeAction(later)).effect_class is None
    assert rules.check(CodeAction(later), kernel=ledger) == "ask"
    ledger.finished("by-hand")
    ledger.restarted()  # a reset: the kernel's state is gone
    assert ledger.widened is None and rules.check(CodeAction(later), kernel=ledger) == "allow"


@settings(max_examples=40, deadline=None)
@given(cells=st.lists(st.sampled_from(IN_FOLDER), min_size=1, max_size=4), later=st.sampled_from(LATER))
def test_in_folder_work_never_widens_the_kernel(cells: list[str], later: str) -> None:
    ledger = KernelLedger(FOLDER)
    for k, cell in enumerate(cells):
        ledger.ran(CodeAction(cell), str(k))
    assert ledger.widened is None and ledger.lost is None
    assert _rules().check(CodeAction(later), kernel=ledger) == "allow"


def test_programs_and_file_tools_approved_by_hand_widen_it_and_built_in_reads_do_not() -> None:
    ledger = KernelLedger(FOLDER)
    ledger.ran(ShellAction("ls"), "a", vouched=True)  # a built-in read-only rule allowed it
    ledger.ran(FileWrite("inside.txt", "x"), "b")
    assert ledger.widened is None
    ledger.ran(FileWrite("/tmp/x/matplotlibrc", "backend: module://evil"), "c")
    assert ledger.widened is not None
    other = KernelLedger(FOLDER)
    other.ran(ShellAction("cp evil.py /tmp/site/numpy.py"), "d")
    assert other.widened is not None


def _gate(rules: PermissionRules, answers: list[bool]) -> tuple[ApprovalGate, list[Any]]:
    events: list[Any] = []

    def emit(event: Any) -> None:
        events.append(event)
        if isinstance(event, ApprovalRequest) and not event.decided:
            event.approve(answers.pop(0))

    ports = EventPorts(emit=emit, ids=lambda c: {"agent_id": "main", "corr_id": c}, set_phase=lambda c, p: None)
    return ApprovalGate(rules, ports, timeout=None, working_dir=FOLDER), events


def test_the_reported_case_through_the_gate_in_the_in_folder_mode() -> None:
    """Cell 1 approved by hand sets a log file outside; cell 2, in-folder by its text, is asked."""
    rules = PermissionRules(None, working_dir=FOLDER)
    rules.mode = ApprovalMode.IN_FOLDER
    gate, events = _gate(rules, answers=[True, False])
    first = CodeAction(WIDER[0])
    second = CodeAction("import logging\nsecret = open('notes.txt').read()\nlogging.warning(secret)")

    async def run() -> tuple[bool, bool]:
        one = await gate.ask(first, "c1")
        two = await gate.ask(second, "c2")
        return one.approved, two.approved

    assert asyncio.run(run()) == (True, False)
    asked = [e for e in events if isinstance(e, ApprovalRequest)]
    assert not asked[1].decision.by_rule if asked[1].decision else True
    assert WIDENED in asked[1].effects
    gate.kernel_restarted()
    gate.kernel.settle()
    gate.kernel_restarted()

    async def again() -> bool:
        return (await gate.ask(second, "c3")).approved

    assert asyncio.run(again()) is True  # after a reset, in-folder work runs unasked again
