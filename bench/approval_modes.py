"""Approvals asked per task in each approval mode (#42), through the real approval gate and rules.

The tasks are ``bench/real_model.py``'s, each as the cells a code agent writes for it (scripted: the
reading and the gate are measured, not a model). Every cell goes through ``ApprovalGate.ask`` as a
code action, then its ``!`` parts as shell actions (as the code action runner asks them); an
undecided request counts as one approval asked (and is approved). ``ask+s`` is the ask mode where the
user answers the first question with ``s`` and the proposed rule (``effects:in-folder`` for in-folder
code). Run: ``python bench/approval_modes.py [--json] [--from-sessions DIR]``.

``--from-sessions DIR`` takes the tasks from a session store this app (or freeact) wrote instead: each
agent history of each session (``main.jsonl``, ``sub-*.jsonl``: one kernel each) is one task, its code
actions in order its cells, an ``ipybox_reset`` a restart of its kernel. The cells are read against a
scratch folder (their relative paths land inside it), not the folder the session ran in.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._report import print_figures  # noqa: E402
from freeact_tui.actions.ports import EventPorts  # noqa: E402
from freeact_tui.agent.approvals import ApprovalGate  # noqa: E402
from freeact_tui.effects.modes import ApprovalMode  # noqa: E402
from freeact_tui.events import AgentEvent, ApprovalRequest, Decision  # noqa: E402
from freeact_tui.permissions.patterns import proposed_pattern  # noqa: E402
from freeact_tui.permissions.rules import PermissionRules  # noqa: E402
from freeact_tui.shell.words import split_command  # noqa: E402
from freeact_tui.store.history import read_history  # noqa: E402
from freeact_tui.store.transcript import CallEntry, walk  # noqa: E402
from freeact_tui.toolcalls import RESET_TOOL, CodeAction, ShellAction  # noqa: E402

RESET = None
"""A restart of the task's kernel between two cells (``ipybox_reset``)."""
Cell = str | None

TASKS: dict[str, list[Cell]] = {
    "compute": ["print(1234 * 5678)"],
    "primes": [
        "def is_prime(n):\n    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))\n"
        "print(sum(1 for n in range(10000) if is_prime(n)))"
    ],
    "create_file": ["with open('hello.txt', 'w') as f:\n    f.write('hello world')"],
    "edit_file": [
        "print(open('config.ini').read())",
        "text = open('config.ini').read().replace('color = red', 'color = blue')\n"
        "open('config.ini', 'w').write(text)",
    ],
    "json_file": [
        "import json\njson.dump({'a': 1, 'b': 2, 'c': 4}, open('data.json', 'w'))",
        "import json\nd = json.load(open('data.json'))\nprint(sum(d.values()))",
    ],
    "shell_count": ["!wc -l rows.csv"],
    "shell_find": ["!ls *.py"],
    "state": ["secret = 41", "print(secret + 1)"],
    "pandas": [
        "import pandas as pd\ndf = pd.read_csv('rows.csv', header=None)\nprint(df.describe())\n"
        "df.to_csv('summary.csv', index=False)"
    ],
    "fetch": ["import urllib.request\nprint(urllib.request.urlopen('https://example.com').status)"],
}
MODES = ("ask", "ask+s", "in-folder", "plan", "sandboxed-auto")


class _Counter:
    def __init__(self, answer_with_s: bool) -> None:
        self.asked = 0
        self.answer_with_s = answer_with_s
        self.saved = False

    def emit(self, event: AgentEvent) -> None:
        if isinstance(event, ApprovalRequest) and not event.decided:
            self.asked += 1
            if self.answer_with_s and not self.saved and isinstance(event.tool_call, CodeAction):
                pattern = proposed_pattern(event.tool_call, event.effect_class)
                event.resolve(Decision(True, remember="session", pattern=pattern))
                self.saved = True
            else:
                event.resolve(Decision(True))


def _rules(mode: str, work: Path) -> PermissionRules:
    rules = PermissionRules(None, working_dir=work)
    rules.sandboxed = True
    rules.mode = ApprovalMode.ASK if mode == "ask+s" else ApprovalMode(mode)
    return rules


async def _task(cells: list[Cell], mode: str, work: Path, rules: PermissionRules, counter: _Counter) -> int:
    """Ask for a task's cells in one kernel (its own gate and ledger), each cell finished after it ran."""
    before = counter.asked
    ports = EventPorts(
        emit=counter.emit, ids=lambda corr: {"agent_id": "main", "corr_id": corr}, set_phase=lambda *_: None
    )
    gate = ApprovalGate(rules, ports, timeout=None, working_dir=work)
    for k, cell in enumerate(cells):
        if cell is RESET:
            gate.kernel_restarted()
            continue
        decision = await gate.ask(CodeAction(cell), f"c{k}")
        if decision.approved:
            for line in cell.splitlines():
                if line.lstrip().startswith("!"):
                    for part in split_command(line.lstrip()[1:]):
                        await gate.ask(ShellAction(part, full_command=line), f"c{k}")
        gate.take_records(f"c{k}")  # the call finished
    return counter.asked - before


def session_tasks(root: Path) -> dict[str, list[Cell]]:
    """Every code action of every session under ``root``, per agent history (``<id>/<agent>.jsonl``).

    Raises:
        ValueError: ``root`` is not a folder, or holds no session history (one line says which).
    """
    if not root.is_dir():
        raise ValueError(f"{root} is not a folder of sessions")
    tasks: dict[str, list[Cell]] = {}
    for path in sorted(root.glob("*/*.jsonl")):
        cells: list[Cell] = []
        for entry in walk(read_history(path).messages):  # a damaged history counts up to its damage
            if isinstance(entry, CallEntry) and isinstance(entry.call, CodeAction):
                cells.append(entry.call.code)
            elif isinstance(entry, CallEntry) and entry.tool_name == RESET_TOOL:
                cells.append(RESET)
        tasks[f"{path.parent.name[:8]}/{path.stem}"] = cells
    if not tasks:
        raise ValueError(f"no session history (<id>/main.jsonl) in {root}")
    return tasks


async def main(tasks: dict[str, list[Cell]] = TASKS) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "rows.csv").write_text("1,1\n2,4\n")
        (work / "config.ini").write_text("[main]\ncolor = red\n")
        for mode in MODES:
            # one session through all the tasks: a session rule saved with `s` carries over
            rules, counter = _rules(mode, work), _Counter(answer_with_s=mode == "ask+s")
            counts = {name: await _task(cells, mode, work, rules, counter) for name, cells in tasks.items()}
            figures[f"asked_{mode}"] = sum(counts.values())
            figures[f"asked_per_task_{mode}"] = round(sum(counts.values()) / max(len(counts), 1), 2)
            figures[f"asked_tasks_{mode}"] = ",".join(n for n, c in counts.items() if c) or "-"
    figures["tasks"] = len(tasks)
    figures["cells"] = sum(1 for cells in tasks.values() for c in cells if c is not RESET)
    figures["seconds"] = round(time.perf_counter() - started, 3)
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--from-sessions", type=Path, metavar="DIR", help="the tasks of a session store")
    args = parser.parse_args()
    try:
        chosen = session_tasks(args.from_sessions.expanduser()) if args.from_sessions else TASKS
    except ValueError as exc:
        sys.exit(f"approval_modes: {exc}")
    print_figures(asyncio.run(main(chosen)), as_json=args.json)
