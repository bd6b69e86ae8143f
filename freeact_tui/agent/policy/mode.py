"""An agent's action protocol: the configured one, and the one in force now (``auto`` may switch to text)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic_ai.messages import ModelMessage

from freeact_tui.agent.policy.text_protocol import ProtocolName, is_text_session


class ActionMode:
    """``tools``, ``text`` or ``auto`` as configured, and whether actions are code blocks now.

    The one place that tests the mode: everything else asks ``tools_only``, ``auto`` and ``text``.
    """

    def __init__(self, configured: ProtocolName) -> None:
        self.configured: ProtocolName = configured
        self.current: Literal["tools", "text"] = "text" if configured == "text" else "tools"

    @property
    def tools_only(self) -> bool:
        """``tools``: the model calls tools well; its replies are taken as they are (the null policy)."""
        return self.configured == "tools"

    @property
    def auto(self) -> bool:
        return self.configured == "auto"

    @property
    def text(self) -> bool:
        """The actions are code blocks in the reply now (``text``, or ``auto`` after a switch)."""
        return self.current == "text"

    def resume(self, history: Sequence[ModelMessage]) -> None:
        """An ``auto`` session that had switched to text stays in text (called once, after loading)."""
        if self.auto and is_text_session(history):
            self.current = "text"

    def switch_to_text(self) -> None:
        self.current = "text"


__all__ = ["ActionMode"]
