"""The context gauge of the status bar: how full the model's window is, coloured from 70 % and 90 %."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Label

if TYPE_CHECKING:  # annotations only: the events load with the agent, after the first frame
    from freeact_tui.events import ContextUpdate

WARNING_AT = 0.7
ERROR_AT = 0.9


def _tokens(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)


class ContextGauge(Label):
    """``ctx 42%`` (``~`` marks an estimate); the tooltip gives the tokens and where the window comes from."""

    DEFAULT_CSS = """
    ContextGauge { padding: 0 1; }
    ContextGauge.-warning { color: $text-warning; }
    ContextGauge.-error { color: $text-error; text-style: bold; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.usage: ContextUpdate | None = None

    def show(self, usage: ContextUpdate) -> None:
        self.usage = usage
        fraction = usage.fraction
        mark = "~" if usage.estimated else ""
        text = f"ctx {mark}{fraction:.0%}"
        if self.content != text:
            self.update(text)
        self.set_class(WARNING_AT <= fraction < ERROR_AT, "-warning")
        self.set_class(fraction >= ERROR_AT, "-error")
        kind = "estimated" if usage.estimated else "counted by the provider"
        self.tooltip = (
            f"Context: {_tokens(usage.used)} of {_tokens(usage.window)} tokens ({kind}); "
            f"window from the {usage.source}. /context shows what fills it, /compact frees it."
        )
