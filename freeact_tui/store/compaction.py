"""The compaction record in a session file, and the history a resumed session continues from.

A compaction appends one ordinary message to the JSONL file: a ``ModelRequest`` whose user prompt
is the summary of the earlier conversation, with ``metadata[COMPACTION_KEY]`` saying from which
line the history is kept verbatim. freeact (and any pydantic-ai reader) sees a valid history: all
earlier messages, then the summary as a user message (pydantic-ai merges it with an adjacent
request). This package reads the record to rebuild the compacted history:

    [system prompt + summary] + lines kept_from .. record-1 + lines after the record
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from freeact_tui.store.event_record import event_of
from freeact_tui.store.meta_keys import COMPACTION_KEY

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ModelRequest

SUMMARY_HEADER = (
    "[Context compacted] The earlier part of this conversation was summarised to save context; "
    "the full text stays in the session file. Summary of the earlier conversation:"
)


@dataclass(frozen=True)
class CompactionInfo:
    """What a compaction record says: ``kept_from`` is the first file line kept verbatim."""

    kept_from: int
    replaced: int
    tokens_before: int
    tokens_after: int
    focus: str | None = None
    timing: CompactionTiming | None = None
    """How the compaction ran, as the live log said it (records of earlier versions have none)."""

    def as_metadata(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "kept_from": self.kept_from,
            "replaced": self.replaced,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "focus": self.focus,
        }
        if self.timing is not None:
            t = self.timing
            record |= {"reason": t.reason, "seconds": t.seconds, "summary_tokens": [t.tokens_in, t.tokens_out]}
        return {COMPACTION_KEY: record}


@dataclass(frozen=True)
class CompactionTiming:
    """Why and how long a compaction ran, and the summary request's tokens."""

    reason: str
    """``auto`` or ``manual`` (``/compact``)."""
    seconds: float
    tokens_in: int
    tokens_out: int

    @classmethod
    def parse(cls, raw: dict[str, Any]) -> CompactionTiming | None:
        reason, seconds, tokens = raw.get("reason"), raw.get("seconds"), raw.get("summary_tokens")
        if reason not in ("auto", "manual") or not isinstance(seconds, int | float) or not isinstance(tokens, list):
            return None
        if len(tokens) != 2 or not all(isinstance(n, int) for n in tokens):
            return None
        return cls(reason, float(seconds), tokens[0], tokens[1])


def compaction_info(message: ModelMessage) -> CompactionInfo | None:
    """The compaction a message records, or ``None`` for any other message."""
    meta = getattr(message, "metadata", None)
    if getattr(message, "kind", "") != "request" or not isinstance(meta, dict):
        return None
    raw = meta.get(COMPACTION_KEY)
    if not isinstance(raw, dict) or not isinstance(raw.get("kept_from"), int):
        return None
    focus = raw.get("focus")
    return CompactionInfo(
        kept_from=raw["kept_from"],
        replaced=int(raw.get("replaced") or 0),
        tokens_before=int(raw.get("tokens_before") or 0),
        tokens_after=int(raw.get("tokens_after") or 0),
        focus=focus if isinstance(focus, str) else None,
        timing=CompactionTiming.parse(raw),
    )


def summary_text(record: ModelMessage) -> str:
    """The summary a compaction record carries (without its header)."""
    for part in record.parts:
        content = getattr(part, "content", None)
        if getattr(part, "part_kind", "") == "user-prompt" and isinstance(content, str):
            return content.removeprefix(SUMMARY_HEADER).strip()
    return ""


def head_message(first: ModelMessage | None, record: ModelRequest) -> ModelRequest:
    """The first message of a compacted history: the session's system prompt, then the summary."""
    from dataclasses import replace

    from pydantic_ai.messages import SystemPromptPart

    system = [p for p in (first.parts if first is not None else []) if isinstance(p, SystemPromptPart)]
    return replace(record, parts=[*system, *record.parts])


def compacted_view(stored: Sequence[ModelMessage]) -> tuple[list[ModelMessage], list[int]]:
    """The history to continue from and, for each of its messages, its line in the file (event records,
    which the model never sees, are left out)."""
    last = -1
    for index in range(len(stored) - 1, -1, -1):
        if compaction_info(stored[index]) is not None:
            last = index
            break
    if last < 0:
        positions = [i for i, m in enumerate(stored) if event_of(m) is None]
        return [stored[i] for i in positions], positions
    info = compaction_info(stored[last])
    assert info is not None
    record = stored[last]
    kept_from = min(max(info.kept_from, 1), last)
    head = head_message(stored[0], record)  # type: ignore[arg-type]  # a record is a request
    # Earlier records inside the kept range are summarised by this one: skip them.
    kept = [i for i in range(kept_from, last) if compaction_info(stored[i]) is None and event_of(stored[i]) is None]
    after = [i for i in range(last + 1, len(stored)) if event_of(stored[i]) is None]
    positions = [last, *kept, *after]
    history = [head, *(stored[i] for i in (*kept, *after))]
    return history, positions


__all__ = [
    "COMPACTION_KEY",
    "SUMMARY_HEADER",
    "CompactionInfo",
    "CompactionTiming",
    "compacted_view",
    "compaction_info",
    "head_message",
    "summary_text",
]
