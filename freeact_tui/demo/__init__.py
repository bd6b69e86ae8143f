"""The offline demo model (``--model demo``): ``intents`` (what it makes of a prompt) and ``model``
(the scripted pydantic-ai ``FunctionModel``). Not part of the agent core: the agent resolves it by name."""

from freeact_tui.demo.model import DEMO_MODEL, TOUR, Intent, demo_model, parse_intent

__all__ = ["DEMO_MODEL", "TOUR", "Intent", "demo_model", "parse_intent"]
