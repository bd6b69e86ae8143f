"""A 2,000-turn session against a model with a small window: it stays under the window.

The model is scripted (``tests/windowed.py``): it fails like a provider when a request is larger
than its window, and its summaries keep the ``FACT:`` sentences it is sent. Every 100th prompt
carries a fact; at the end the agent is asked for the first and the last fact. Reported: the
largest request the "provider" saw against its window, the highest gauge reading, how many
compactions ran, their duration in the loop (the scripted model answers at once, so this is our own
cost: rendering and cutting the history, writing the record), the tokens of the summary requests,
and the whole run's time. Run: ``python bench/compaction.py [--json]``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _report import run_bench  # noqa: E402  (bench/ is on the path when a script runs)

from freeact_tui.agent.agent import Agent  # noqa: E402
from freeact_tui.events import AgentError, Compacted, ContextUpdate  # noqa: E402
from freeact_tui.permissions.rules import PermissionRules  # noqa: E402
from tests.windowed import WindowedModel, sent_text  # noqa: E402

TURNS = 2_000
WINDOW = 8_000
FILLER = "A line of work notes that fills the context without carrying facts. " * 4


async def main() -> dict[str, object]:
    model = WindowedModel(WINDOW)
    compactions: list[Compacted] = []
    gauge = 0.0
    errors: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        agent = Agent(
            model.model(),
            sessions_dir=Path(tmp),
            permissions=PermissionRules(None, skip_permissions=True),
            enable_subagents=False,
            eager_kernel=False,
            context_window=WINDOW,
        )
        started = time.perf_counter()
        async with agent:
            for i in range(TURNS + 2):
                if i == TURNS:
                    prompt = "What is the code of item0?"
                elif i == TURNS + 1:
                    prompt = f"What is the code of item{TURNS - 100}?"
                elif i % 100 == 0:
                    prompt = f"FACT: the code of item{i} is c{i * 31}. {FILLER}"
                else:
                    prompt = f"Turn {i}. {FILLER}"
                async for event in agent.stream(prompt):
                    match event:
                        case Compacted():
                            compactions.append(event)
                        case ContextUpdate():
                            gauge = max(gauge, event.fraction)
                        case AgentError(message=message):
                            errors.append(message)
            wall = time.perf_counter() - started
            answers = [m.text for m in agent.history[-3:] if m.kind == "response"]
            file_messages = len(agent.transcript)
            live_messages = len(agent.history)
    summary_requests = [r for r in model.requests if "You compact the history" in sent_text(r)]
    summary_in = [len(sent_text(r)) // 4 for r in summary_requests]
    seconds = [c.seconds for c in compactions]
    return {
        "turns": TURNS,
        "window_tokens": WINDOW,
        "largest_request_tokens": model.largest,
        "largest_request_share_of_window": round(model.largest / WINDOW, 3),
        "highest_gauge": round(gauge, 3),
        "provider_errors": len(errors),
        "compactions": len(compactions),
        "compaction_ms_median": round(statistics.median(seconds) * 1000, 2) if seconds else None,
        "compaction_ms_max": round(max(seconds) * 1000, 2) if seconds else None,
        "tokens_before_median": int(statistics.median(c.tokens_before for c in compactions))
        if compactions
        else None,
        "tokens_after_median": int(statistics.median(c.tokens_after for c in compactions))
        if compactions
        else None,
        "summary_request_tokens_median": int(statistics.median(summary_in)) if summary_in else None,
        "summary_tokens_median": int(statistics.median(len(c.summary) // 4 for c in compactions))
        if compactions
        else None,
        "first_fact_answer": answers[-2] if len(answers) >= 2 else None,
        "last_fact_answer": answers[-1] if answers else None,
        "messages_in_file": file_messages,
        "messages_sent_last": live_messages,
        "run_seconds": round(wall, 1),
    }


if __name__ == "__main__":
    run_bench(__doc__, main)
