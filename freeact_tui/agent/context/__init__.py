"""The context of an agent: the window gauge and the history as sent (``window``), compaction
(``compaction``: pure parts; ``keeper``: ``ContextKeeper``, composed into the agent)."""

from freeact_tui.agent.context.window import (
    CHARS_PER_TOKEN,
    DEFAULT_WINDOW,
    IMAGE_TOKENS,
    KNOWN_WINDOWS,
    ContextBreakdown,
    PreparedHistory,
    breakdown,
    estimate_tokens,
    message_tokens,
    resolve_window,
    tools_tokens,
    trim_text,
)

__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULT_WINDOW",
    "IMAGE_TOKENS",
    "KNOWN_WINDOWS",
    "ContextBreakdown",
    "PreparedHistory",
    "breakdown",
    "estimate_tokens",
    "message_tokens",
    "resolve_window",
    "tools_tokens",
    "trim_text",
]
