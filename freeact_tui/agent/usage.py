"""Token, request and cost totals of one agent's session (a main agent's include its subagents').

Provider usage is taken in one place, ``sane_usage`` (applied to every reply ``model_call.request_response``
returns, and to counts read back from a session): a count is a whole number from 0 to ``MAX_TOKENS``;
anything else (a negative, a float such as ``3.7`` or ``1e30``, a count no request can have) is no count:
missing, and estimated as for a server that reports none.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.usage import RequestUsage

from freeact_tui.events import UsageUpdate
from freeact_tui.store.event_record import event_of, withdrawn_messages
from freeact_tui.store.prompt_record import USAGE_KEY

CHARS_PER_TOKEN = 4
"""The estimate where a server reports no usage: about four characters a token (English and code)."""


MAX_TOKENS = 100_000_000
"""The most tokens one request or reply may count: a provider's count above it is no count (missing)."""


def sane_count(value: object) -> int:
    """A provider's token count as the app takes it: a whole number from 0 to ``MAX_TOKENS`` (a float
    that is whole, ``12.0``, is that number); anything else is 0 — missing, so estimated."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            return 0
        value = int(value)
    return value if isinstance(value, int) and 0 <= value <= MAX_TOKENS else 0


def _taken(value: object) -> bool:
    """``value`` is a count as given (``sane_count`` keeps it)."""
    return not isinstance(value, bool) and sane_count(value) == value


_COUNTS = tuple(f.name for f in dataclasses.fields(RequestUsage) if f.name.endswith("_tokens"))


def sane_usage(response: ModelResponse) -> ModelResponse:
    """``response`` with its usage's token counts checked (``sane_count``); the one place provider usage
    is taken. A reply whose input or output count is no count has neither: it is estimated whole."""
    usage = response.usage
    counts = {name: sane_count(getattr(usage, name)) for name in _COUNTS}
    if not (_taken(usage.input_tokens) and _taken(usage.output_tokens)):
        counts["input_tokens"] = counts["output_tokens"] = 0
    details = {k: sane_count(v) for k, v in (usage.details or {}).items()}
    given = [getattr(usage, name) for name in _COUNTS] + list((usage.details or {}).values())
    if list(counts.values()) + list(details.values()) == given and all(type(v) is int for v in given):
        return response
    checked = dataclasses.replace(usage, details=details)
    for name, count in counts.items():
        setattr(checked, name, count)
    return dataclasses.replace(response, usage=checked)


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
    if usage.requests != 1:  # a retried request: every try was sent (restored as sent)
        record["requests"] = usage.requests
    if usage.cost_usd is not None:
        record["cost"] = usage.cost_usd
    if usage.estimated:
        record["estimated"] = True
    return {USAGE_KEY: record}


def _of_record(record: object) -> UsageUpdate | None:
    """The usage a record of ``usage_record`` keeps (``None``: no such record)."""
    if isinstance(record, dict) and isinstance(record.get("in"), int) and isinstance(record.get("out"), int):
        cost = record.get("cost")
        requests = sane_count(record.get("requests", 1)) or 1  # a retried request: each try was sent
        return UsageUpdate(
            sane_count(record["in"]),
            sane_count(record["out"]),
            requests,
            float(cost) if isinstance(cost, int | float) else None,
            estimated=record.get("estimated") is True,
        )
    return None


def stored_usage(message: ModelMessage) -> UsageUpdate | None:
    """The usage counted for a stored response: the app's record, else the provider's counts (freeact's)."""
    if not isinstance(message, ModelResponse):
        return None
    meta = message.metadata if isinstance(message.metadata, dict) else {}
    recorded = _of_record(meta.get(USAGE_KEY))
    if recorded is not None:
        return recorded
    usage = sane_usage(message).usage
    return UsageUpdate(usage.input_tokens, usage.output_tokens, 1)


def spent_usage(message: ModelMessage) -> Iterator[UsageUpdate]:
    """What was sent and is in no stored response: an error record's request that left no reply
    (``spent``) and the responses its rollback withdrew from the history (sent all the same)."""
    event = event_of(message)
    if event is None or event.get("kind") != "error":
        return
    spent = _of_record(event.get("spent"))
    if spent is not None:
        yield spent
    for withdrawn in withdrawn_messages(event):
        usage = stored_usage(withdrawn)
        if usage is not None:
            yield usage


class SentRequests:
    """The requests one model call sent (``model_call.request_response``'s ``on_sent``): each try counts,
    whatever became of its reply. The one way a request is counted, so usage is what was sent to the
    provider, never what the history kept (a cut, cancelled, failed or rolled-back reply still cost it)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> None:
        self.count += 1

    def unanswered(self, exc: BaseException, estimated_input: int | None = None) -> UsageUpdate:
        """The usage of a call that ended on ``exc`` with no reply: its requests, and the tokens of the
        part of a reply it showed where the provider reported them (a cut stream rarely does). Where it
        reported none, each request sent is ``estimated_input`` tokens (what was sent, estimated as for
        a server that reports no usage: ``estimated``), and the part shown is estimated by its text."""
        partial = getattr(exc, "partial", None)
        shown = partial if isinstance(partial, ModelResponse) else None
        usage = sane_usage(shown).usage if shown is not None else None
        if usage is not None and (usage.input_tokens or usage.output_tokens):
            return UsageUpdate(usage.input_tokens, usage.output_tokens, self.count)
        if estimated_input is None:
            return UsageUpdate(0, 0, self.count)
        output = estimate_response(shown) if shown is not None else 0
        return UsageUpdate(estimated_input * self.count, output, self.count, None, estimated=True)


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
    def of_response(
        response: ModelResponse, estimated_input: int | None = None, *, requests: int = 1
    ) -> UsageUpdate:
        """The usage of one model response (its cost when the model's prices are known); ``requests``:
        the requests sent for it (``SentRequests``: a retried request was sent more than once).

        When the server reported none (no ``usage`` in the stream), the counts are estimates:
        ``estimated_input`` for the request, the response's own text for the output.
        """
        usage = response.usage
        if not usage.input_tokens and not usage.output_tokens and estimated_input is not None:
            return UsageUpdate(estimated_input, estimate_response(response), requests, None, estimated=True)
        cost: float | None = None
        try:
            cost = float(response.cost().total_price)
        except Exception:  # unknown model or no usage: cost stays unknown
            pass
        return UsageUpdate(usage.input_tokens or 0, usage.output_tokens or 0, requests, cost)

    def restore(self, messages: Iterable[ModelMessage]) -> None:
        """Count in the usage stored with past responses (a resumed session goes on from its totals)."""
        for message in messages:
            usage = stored_usage(message)
            if usage is not None:
                self.add(usage)
            for spent in spent_usage(message):  # sent, though the history kept no reply of it
                self.add(spent)

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


__all__ = [
    "MAX_TOKENS",
    "SentRequests",
    "UsageMeter",
    "estimate_response",
    "estimate_tokens",
    "sane_count",
    "sane_usage",
    "spent_usage",
    "stored_usage",
    "usage_record",
]
