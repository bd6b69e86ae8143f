"""SIGKILL of a process driving a multi-turn session with code actions, at random moments.

Runs ``--tries`` kills (default 100) of ``tests/kill_driver.py`` (a real agent, a real kernel, a
scripted model; every action approved), a quarter of them while it starts, the rest within 1.5 s of
its first completed turn, then checks every session: it lists, loads without damage, and resumes
with a new turn. Prints tries / survived / lost (turns the driver reported complete but missing
from its session) and the turns completed before the kills.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


async def main(tries: int, seed: int) -> dict[str, object]:
    from freeact_tui.store.sessions import SessionStore
    from tests.cli.test_kill_sessions import check_survivor, kill_at_random, prompts

    rng = random.Random(seed)
    survived = lost = 0
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        kills = [
            kill_at_random(root / "sessions", root / f"w{i}", rng, early=i % 4 == 0) for i in range(tries)
        ]
        store = SessionStore(root / "sessions")
        listed = {info.id for info in store.list()}
        for kill in kills:
            session = store.session(kill.session_id)
            if session.exists():
                stored = len(prompts(session.load().messages))
                lost += max(0, kill.completed - stored)
                if kill.session_id not in listed:
                    failures.append(f"{kill.session_id}: not listed")
                    continue
            try:
                await check_survivor(store, kill, root)
            except AssertionError as exc:
                failures.append(f"{kill.session_id}: {exc}")
                continue
            survived += 1
    return {
        "tries": tries,
        "survived": survived,
        "lost_turns": lost,
        "turns_completed_before_kill_median": statistics.median(k.completed for k in kills),
        "failures": failures[:5],
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    figures = asyncio.run(main(args.tries, args.seed))
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:40} {value}")
