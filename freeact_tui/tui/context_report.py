"""Texts of the context commands: ``/context`` (what fills the window) and the log's compaction marker."""

from __future__ import annotations

from typing import TYPE_CHECKING

from freeact_tui.events import Compacted
from freeact_tui.tui.replay import compaction_note

if TYPE_CHECKING:
    from freeact_tui.agent.agent import Agent

# The agent and the transcript bring pydantic-ai (~0.5 s): imported when a report is made, so the
# first screen can be drawn without them.


def context_report(agent: Agent) -> str:
    """The window, how full it is, and an estimated breakdown of the next request by kind."""
    from freeact_tui.agent.context import IMAGE_TOKENS

    usage = agent.context_usage()
    parts = agent.context_breakdown()
    counted = "estimated" if usage.estimated else "counted by the provider at the last answer"
    rows = [
        ("system prompt", parts.system),
        ("tools", parts.tools),
        ("history", parts.history),
        ("tool results", parts.tool_results),
        ("images", parts.images),
    ]
    width = max(len(name) for name, _ in rows)
    lines = [
        f"Window: {usage.window:,} tokens (from the {usage.source}).",
        f"In use: {usage.used:,} tokens, {usage.fraction:.0%} ({counted}).",
        "",
        f"Breakdown of the next request (estimates: ~4 characters a token, ~{IMAGE_TOKENS:,} per image):",
        *(f"  {name:<{width}}  {tokens:>9,}" for name, tokens in rows),
        f"  {'total':<{width}}  {parts.total:>9,}",
        "",
        f"Older turns are compacted automatically at {agent.runtime.settings.compact_threshold:.0%} of the "
        "window; /compact [focus] compacts now.",
    ]
    return "\n".join(lines)


def compacted_note(event: Compacted) -> str:
    """The log's marker where a compaction happened (live, as the replay of a resumed session shows it)."""
    from freeact_tui.store import transcript as tr

    note = compaction_note(
        tr.CompactionEntry(event.summary, event.replaced, event.tokens_before, event.tokens_after)
    )
    how = "automatically" if event.reason == "auto" else "by /compact"
    return (
        f"Compacted {how} in {event.seconds:.1f} s (summary request: {event.summary_input_tokens:,} tokens in, "
        f"{event.summary_output_tokens:,} out).\n{note}"
    )
