"""Approvals asked per task in each approval mode (#42), through the real approval gate and rules.

The tasks are ``bench/real_model.py``'s, each as the cells a code agent writes for it (scripted: the
reading and the gate are measured, not a model). Every cell goes through ``ApprovalGate.ask`` as a
code action, then its ``!`` parts as shell actions (as the code action runner asks them); an
undecided request counts as one approval asked (and is approved). ``ask+s`` is the ask mode where the
user answers the first question with ``s`` and the proposed rule (``effects:in-folder`` for in-folder
code). Run: ``python bench/approval_modes.py [--json]``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._report import run_bench  # noqa: E402
from freeact_tui.actions.ports import EventPorts  # noqa: E402
from freeact_tui.agent.approvals import ApprovalGate  # noqa: E402
from freeact_tui.effects.modes import ApprovalMode  # noqa: E402
from freeact_tui.events import AgentEvent, ApprovalRequest, Decision  # noqa: E402
from freeact_tui.permissions import PermissionRules  # noqa: E402
from freeact_tui.rulepatterns import proposed_pattern  # noqa: E402
from freeact_tui.shellwords import split_command  # noqa: E402
from freeact_tui.toolcalls import CodeAction, ShellAction  # noqa: E402

TASKS: dict[str, list[str]] = {
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


async def _task(cells: list[str], mode: str, work: Path, rules: PermissionRules, counter: _Counter) -> int:
    before = counter.asked
    ports = EventPorts(
        emit=counter.emit, ids=lambda corr: {"agent_id": "main", "corr_id": corr}, set_phase=lambda *_: None
    )
    gate = ApprovalGate(rules, ports, timeout=None, working_dir=work)
    for k, cell in enumerate(cells):
        decision = await gate.ask(CodeAction(cell), f"c{k}")
        if not decision.approved:
            continue
        for line in cell.splitlines():
            if line.lstrip().startswith("!"):
                for part in split_command(line.lstrip()[1:]):
                    await gate.ask(ShellAction(part, full_command=line), f"c{k}")
    return counter.asked - before


async def main() -> dict[str, Any]:
    figures: dict[str, Any] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "rows.csv").write_text("1,1\n2,4\n")
        (work / "config.ini").write_text("[main]\ncolor = red\n")
        for mode in MODES:
            # one session through all the tasks: a session rule saved with `s` carries over
            rules, counter = _rules(mode, work), _Counter(answer_with_s=mode == "ask+s")
            counts = {name: await _task(cells, mode, work, rules, counter) for name, cells in TASKS.items()}
            figures[f"asked_{mode}"] = sum(counts.values())
            figures[f"asked_per_task_{mode}"] = round(sum(counts.values()) / len(counts), 2)
            figures[f"asked_tasks_{mode}"] = ",".join(n for n, c in counts.items() if c) or "-"
    figures["tasks"] = len(TASKS)
    figures["cells"] = sum(len(c) for c in TASKS.values())
    figures["seconds"] = round(time.perf_counter() - started, 3)
    return figures


if __name__ == "__main__":
    run_bench(__doc__.splitlines()[0] if __doc__ else "", main)
