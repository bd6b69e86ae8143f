"""The agent's usage events as ACP ``usage_update``: the context window's fill (tokens used of its size)
and the session's cost so far, where the model's price is known."""

from __future__ import annotations

from acp.schema import Cost
from acp.schema import UsageUpdate as AcpUsageUpdate

from freeact_tui.events import ContextUpdate, UsageUpdate


def usage_update(usage: UsageUpdate | None, context: ContextUpdate) -> AcpUsageUpdate:
    """``used``/``size``: the context window's fill; ``cost``: the session's, in US dollars, when known."""
    cost = usage.cost_usd if usage is not None else None
    return AcpUsageUpdate(
        session_update="usage_update",
        used=max(0, context.used),
        size=max(0, context.window),
        cost=Cost(amount=cost, currency="USD") if cost is not None else None,
        field_meta={
            "freeact-tui": {
                "inputTokens": usage.input_tokens if usage is not None else 0,
                "outputTokens": usage.output_tokens if usage is not None else 0,
                "requests": usage.requests if usage is not None else 0,
                "estimated": context.estimated or (usage.estimated if usage is not None else False),
            }
        },
    )


__all__ = ["usage_update"]
