"""Token, request and cost totals of one agent's session (a main agent's include its subagents')."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse

from freeact_tui.events import UsageUpdate
from freeact_tui.store.prompt_record import USAGE_KEY

CHARS_PER_TOKEN = 4
"""The estimate where a server reports no usage: about four characters a token (English and code)."""


def estimate_tokens(text: str) -> int:
    """Tokens of ``text``, estimated (no tokenizer: the model's is unknown, and none is downloaded)."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _part_text(part: Any) -> str:
    content = getattr(part, "content", None)
    if isinstance(content, str):
        return content
    args = getattr(part, "args", None)
    if args is not None:
        return (args if isinstance(args, str) else json.dumps(args)) + str(getattr(part, "tool_name", ""))
    if content is not None:
        return json.dumps(content, default=lambda _: "")
    return ""


def estimate_response(response: ModelResponse) -> int:
    return estimate_tokens("".join(_part_text(part) for part in response.parts))


def usage_record(usage: UsageUpdate) -> dict[str, Any]:
    """The response metadata that keeps ``usage`` in the session file (estimates are not in ``response.usage``)."""
    record: dict[str, Any] = {"in": usage.input_tokens, "out": usage.output_tokens}
    if usage.cost_usd is not None:
        record["cost"] = usage.cost_usd
    if usage.estimated:
        record["estimated"] = True
    return {USAGE_KEY: record}


def stored_usage(message: ModelMessage) -> UsageUpdate | None:
    """The usage counted for a stored response: the app's record, else the provider's counts (freeact's)."""
    if not isinstance(message, ModelResponse):
        return None
    meta = message.metadata if isinstance(message.metadata, dict) else {}
    record = meta.get(USAGE_KEY)
    if isinstance(record, dict) and isinstance(record.get("in"), int) and isinstance(record.get("out"), int):
        cost = record.get("cost")
        return UsageUpdate(
            record["in"],
            record["out"],
            1,
            float(cost) if isinstance(cost, int | float) else None,
            estimated=record.get("estimated") is True,
        )
    usage = message.usage
    return UsageUpdate(usage.input_tokens or 0, usage.output_tokens or 0, 1)


class UsageMeter:
    """Adds up the usage of model responses (and of finished subagents)."""

    def __init__(self, agent_id: str) -> None:
        self.agent_id = agent_id
        self.input_tokens = 0
        self.output_tokens = 0
        self.requests = 0
        self.cost: float | None = None
        self.estimated = False

    @staticmethod
    def of_response(response: ModelResponse, estimated_input: int | None = None) -> UsageUpdate:
        """The usage of one model response (its cost when the model's prices are known).

        When the server reported none (no ``usage`` in the stream), the counts are estimates:
        ``estimated_input`` for the request, the response's own text for the output.
        """
        usage = response.usage
        if not usage.input_tokens and not usage.output_tokens and estimated_input is not None:
            return UsageUpdate(estimated_input, estimate_response(response), 1, None, estimated=True)
        cost: float | None = None
        try:
            cost = float(response.cost().total_price)
        except Exception:  # unknown model or no usage: cost stays unknown
            pass
        return UsageUpdate(usage.input_tokens or 0, usage.output_tokens or 0, 1, cost)

    def restore(self, messages: Iterable[ModelMessage]) -> None:
        """Count in the usage stored with past responses (a resumed session goes on from its totals)."""
        for message in messages:
            usage = stored_usage(message)
            if usage is not None:
                self.add(usage)

    def add(self, usage: UsageUpdate) -> UsageUpdate:
        """Count ``usage`` in; return the new totals."""
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.requests += usage.requests
        if usage.cost_usd is not None:
            self.cost = (self.cost or 0.0) + usage.cost_usd
        self.estimated = self.estimated or usage.estimated
        return self.totals

    @property
    def totals(self) -> UsageUpdate:
        return UsageUpdate(
            self.input_tokens,
            self.output_tokens,
            self.requests,
            self.cost,
            estimated=self.estimated,
            agent_id=self.agent_id,
        )


__all__ = ["UsageMeter", "estimate_response", "estimate_tokens", "stored_usage", "usage_record"]
