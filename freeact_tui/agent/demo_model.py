"""The offline demo model lives in ``freeact_tui.demo`` (out of the agent core); this path keeps working."""

from freeact_tui.demo.model import DEMO_MODEL, TOUR, Intent, demo_model, parse_intent

__all__ = ["DEMO_MODEL", "TOUR", "Intent", "demo_model", "parse_intent"]
