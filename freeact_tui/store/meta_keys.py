"""The keys of the metadata the app writes on a session's messages: one vocabulary for every reader.

Written by the agent (``agent/policy``, ``agent/history``) and read by the transcript, the replay, the
rewind file and the checkpoints. Plain strings with no import, so that a module that must not load
pydantic-ai (``store/rewind_file.py``) reads the same names as the rest instead of copies.
"""

from __future__ import annotations

COMPACTION_KEY = "freeact_tui_compaction"
"""Request metadata of a compaction summary (``store/compaction.py``)."""
TEXT_ACTIONS_KEY = "freeact_tui_text_actions"
"""Request metadata of a text-protocol results message (``agent/policy/text_protocol.py`` writes it)."""
SWITCH_KEY = "freeact_tui_protocol_switch"
"""Request metadata: the session switched to text actions here (the value says why)."""
NUDGE_KEY = "freeact_tui_nudge"
"""Request metadata of a nudge: the agent told the model to act (``agent/policy/nudge.py``; the value says why)."""

__all__ = ["COMPACTION_KEY", "NUDGE_KEY", "SWITCH_KEY", "TEXT_ACTIONS_KEY"]
