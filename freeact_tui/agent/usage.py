"""Token, request and cost totals of one agent's session (a main agent's include its subagents')."""

from __future__ import annotations

from pydantic_ai.messages import ModelResponse

from freeact_tui.events import UsageUpdate


class UsageMeter:
    """Adds up the usage of model responses (and of finished subagents)."""

    def __init__(self, agent_id: str) -> None:
        self.agent_id = agent_id
        self.input_tokens = 0
        self.output_tokens = 0
        self.requests = 0
        self.cost: float | None = None

    @staticmethod
    def of_response(response: ModelResponse) -> UsageUpdate:
        """The usage of one model response (its cost when the model's prices are known)."""
        usage = response.usage
        cost: float | None = None
        try:
            cost = float(response.cost().total_price)
        except Exception:  # unknown model or no usage: cost stays unknown
            pass
        return UsageUpdate(usage.input_tokens or 0, usage.output_tokens or 0, 1, cost)

    def add(self, usage: UsageUpdate) -> UsageUpdate:
        """Count ``usage`` in; return the new totals."""
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.requests += usage.requests
        if usage.cost_usd is not None:
            self.cost = (self.cost or 0.0) + usage.cost_usd
        return self.totals

    @property
    def totals(self) -> UsageUpdate:
        return UsageUpdate(
            self.input_tokens, self.output_tokens, self.requests, self.cost, agent_id=self.agent_id
        )


__all__ = ["UsageMeter"]
