"""Approvals asked per task in each approval mode (#42), on the code actions a real model wrote.

``real_model.py --keep-sessions DIR`` keeps each task's session store (``DIR/r<round>-<agent>-<task>``,
with ``work.txt`` naming the folder the task ran in). This reads every code action of each kept
main session — tool calls and text-protocol blocks alike, through the store's own ``walk`` — and puts
them, in order, through the real approval gate in each mode, exactly as ``approval_modes.py`` does
with its scripted cells (its ``_task``: a cell as a code action, then its ``!`` parts as shell
actions; ``ask+s`` answers the first question of a task with ``s`` and the proposed rule).

    python bench/approvals_real.py DIR [--json]

Prints, per task, the code actions the model wrote and the approvals asked per attempt in each
mode, then the totals. The cells are what the model wrote when every action was approved (the
kept runs); a mode that asks less would not change them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.approval_modes import MODES, _Counter, _rules, _task  # noqa: E402
from freeact_tui.store.history import read_history  # noqa: E402
from freeact_tui.store.transcript import CallEntry, walk  # noqa: E402
from freeact_tui.toolcalls import CodeAction  # noqa: E402

_RUN = re.compile(r"^r(?P<round>\d+)-(?P<agent>[^-]+)-(?P<task>.+)$")


def cells_of(store: Path) -> list[str]:
    """The code actions of every main session in a kept session store, in the order they were written."""
    cells: list[str] = []
    for path in sorted(store.glob("*/main.jsonl"), key=lambda p: p.stat().st_mtime):
        for entry in walk(read_history(path).messages):
            if isinstance(entry, CallEntry) and isinstance(entry.call, CodeAction):
                cells.append(entry.call.code)
    return cells


def kept_runs(runs: Path) -> list[tuple[dict[str, str], Path, list[str]]]:
    """Each kept run: its round, agent and task, the folder it ran in, and the code actions written."""
    kept = []
    for run in sorted(p for p in runs.iterdir() if p.is_dir()):
        match = _RUN.match(run.name)
        if match:
            work = Path((run / "work.txt").read_text().strip()) if (run / "work.txt").is_file() else run
            kept.append((match.groupdict(), work, cells_of(run)))
    return kept


async def count(kept: list[tuple[dict[str, str], Path, list[str]]]) -> list[dict[str, Any]]:
    """One row per kept run: its task, agent, round, cells and the approvals asked in each mode."""
    rows = []
    for names, work, cells in kept:
        asked = {}
        for mode in MODES:
            # one task is one session: a session rule saved with `s` carries over within it only
            rules, counter = _rules(mode, work), _Counter(answer_with_s=mode == "ask+s")
            asked[mode] = await _task(cells, mode, work, rules, counter)
        rows.append({**names, "cells": len(cells), "asked": asked})
    return rows


def report(rows: list[dict[str, Any]]) -> str:
    """Per task: attempts, code actions and approvals asked per attempt (mean) in each mode; then all."""
    head = "| task | attempts | code actions | " + " | ".join(MODES) + " |"
    lines = [head, "|---|---|---|" + "---|" * len(MODES)]

    def line(name: str, group: list[dict[str, Any]]) -> str:
        per_mode = [f"{statistics.mean(r['asked'][m] for r in group):.1f}" for m in MODES]
        cells = f"{statistics.mean(r['cells'] for r in group):.1f}"
        return f"| {name} | {len(group)} | {cells} | " + " | ".join(per_mode) + " |"

    for task in dict.fromkeys(r["task"] for r in rows):
        lines.append(line(task, [r for r in rows if r["task"] == task]))
    if rows:
        lines.append(line("**all tasks**", rows))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("runs", type=Path, help="the --keep-sessions directory of bench/real_model.py")
    parser.add_argument("--json", action="store_true", help="print one row per kept run as JSON")
    args = parser.parse_args()
    if not args.runs.is_dir():
        raise SystemExit(f"not a directory: {args.runs} (give real_model.py's --keep-sessions DIR)")
    rows = asyncio.run(count(kept_runs(args.runs)))
    print(json.dumps(rows) if args.json else report(rows))


if __name__ == "__main__":
    main()
