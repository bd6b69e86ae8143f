"""A turn of the agent: its state (``state``), its start (``opening``), one model request
(``model_step``), the actions of a step (``actions``) and the loop (``loop``: ``Turn``)."""

from freeact_tui.agent.turn.state import TurnError, TurnState

__all__ = ["TurnError", "TurnState"]
