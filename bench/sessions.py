"""Session store figures: list 1,000 sessions, load a 10,000-message session, append cost per message.

Targets: list <= 200 ms, load <= 1.5 s, append <= 1 ms per message. Run: ``python bench/sessions.py [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from freeact_tui.store import SessionStore
from freeact_tui.store.index import META_FILE

RUNS = 5


def step_messages(
    i: int, code: str, thinking: str, output: str, answer: str, *, model_name: str, **returned: Any
) -> list[ModelMessage]:
    """The four messages of a turn: the prompt, thinking and a code action, its output, the answer (shared by
    the benches that write sessions: ``long_session.py`` too). ``returned``: more of the tool return."""
    return [
        ModelRequest(parts=[UserPromptPart(f"Step {i}: compute the sum of a sine series and explain it.")]),
        ModelResponse(
            parts=[ThinkingPart(thinking), ToolCallPart("ipybox_execute_ipython_cell", {"code": code}, f"call-{i}")],
            model_name=model_name,
        ),
        ModelRequest(parts=[ToolReturnPart("ipybox_execute_ipython_cell", output, f"call-{i}", **returned)]),
        ModelResponse(parts=[TextPart(answer)], model_name=None if model_name == "bench-model" else model_name),
    ]


def turn(i: int) -> list[ModelMessage]:
    """Four messages of a realistic turn (prompt, thinking + code action, output, answer), ~1.3 KB."""
    code = f"import math\nvalues = [math.sin(x / 10) for x in range({i % 97})]\nprint(sum(values))\n" * 3
    thinking = "The user wants a numeric result; run it in the kernel first. " * 3
    answer = f"The sum for step {i} is shown above; it oscillates because sin does. " * 2
    return step_messages(i, code, thinking, f"{i * 0.125:.6f}\n" * 20, answer, model_name="bench-model")


def history(n: int) -> list[ModelMessage]:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart("You are a code-action agent. " * 40)])
    ]
    i = 0
    while len(messages) < n:
        messages.extend(turn(i))
        i += 1
    return messages[:n]


def median_ms(fn: Callable[[], object], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def bench_list(root: Path, count: int = 1000) -> dict[str, float]:
    store = SessionStore(root / "list", fsync=False)
    sample = turn(0)
    for _ in range(count):
        store.new_session().append(sample)
    assert len(store.list()) == count
    warm = median_ms(store.list)

    def cold() -> None:
        for session_id in store._index.ids():
            os.unlink(store.root / session_id / META_FILE)
        store.list()  # rebuilds every meta.json from the history

    return {"list_1000_ms": warm, "list_1000_rebuild_ms": median_ms(cold, runs=3)}


def bench_load(root: Path, count: int = 10_000) -> dict[str, float]:
    store = SessionStore(root / "load", fsync=False)
    session = store.new_session()
    session.append(history(count))
    size = (session.dir / "main.jsonl").stat().st_size
    loaded = session.load()
    assert len(loaded.messages) == count and loaded.damage is None
    return {"load_10000_ms": median_ms(session.load, runs=3), "load_10000_file_mb": size / 1e6}


def bench_append(root: Path, count: int = 200) -> dict[str, float]:
    figures = {}
    messages = history(count)
    for label, fsync in (("append_ms_per_message_fsync", True), ("append_ms_per_message_no_fsync", False)):
        per_message = []
        for run in range(RUNS):
            session = SessionStore(root / f"append-{label}-{run}", fsync=fsync).new_session()
            session.append(messages[:1])  # creates the dir and meta.json outside the timing
            start = time.perf_counter()
            for message in messages[1:]:
                session.append([message])  # one call per message, as the agent does
            per_message.append((time.perf_counter() - start) * 1000 / (count - 1))
        figures[label] = statistics.median(per_message)
    # What the disk alone costs: one sync (fdatasync, as the store uses) after a ~1 KB append.
    sync = getattr(os, "fdatasync", os.fsync)
    fd = os.open(root / "fsync-probe", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        start = time.perf_counter()
        for _ in range(100):
            os.write(fd, b"x" * 1024 + b"\n")
            sync(fd)
        figures["raw_fsync_ms"] = (time.perf_counter() - start) * 10
    finally:
        os.close(fd)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-sessions-") as tmp:
        root = Path(tmp)
        figures = {**bench_list(root), **bench_load(root), **bench_append(root)}
    if args.json:
        json.dump({k: round(v, 3) for k, v in figures.items()}, sys.stdout)
        sys.stdout.write("\n")
        return
    labels = {
        "list_1000_ms": "list 1,000 sessions (meta.json up to date)   target <= 200 ms",
        "list_1000_rebuild_ms": "list 1,000 sessions (no meta.json: rebuilt)",
        "load_10000_ms": "load a 10,000-message session              target <= 1500 ms",
        "load_10000_file_mb": "  (size of that main.jsonl, MB)",
        "append_ms_per_message_fsync": "append, per message, fsync per message      target <= 1 ms",
        "append_ms_per_message_no_fsync": "append, per message, no fsync",
        "raw_fsync_ms": "  (this disk alone: one write + fdatasync, ms)",
    }
    for key, label in labels.items():
        print(f"{label:<62} {figures[key]:9.3f}")


if __name__ == "__main__":
    main()
