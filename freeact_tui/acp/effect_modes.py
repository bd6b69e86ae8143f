"""The app's approval modes over ACP (``session/set_mode``): in-folder, plan, and sandboxed-auto with the sandbox.

Each is an ``ApprovalMode`` (``freeact_tui.effects.modes``) set on the session agent's rules, so the
approval gate decides by it exactly as in the app; ``ask`` (the server's own) sets it back.
"""

from __future__ import annotations

from acp.schema import SessionMode

from freeact_tui.agent.agent import Agent
from freeact_tui.effects.modes import MODE_DESCRIPTIONS, MODE_WORDS, ApprovalMode, modes


def effect_modes(agent: Agent) -> list[SessionMode]:
    """The approval modes beyond ``ask`` this session's agent has (sandboxed-auto only in the sandbox)."""
    return [
        SessionMode(id=mode.value, name=MODE_WORDS[mode].capitalize(), description=MODE_DESCRIPTIONS[mode])
        for mode in modes(sandboxed=agent.permissions.sandboxed)
        if mode != ApprovalMode.ASK
    ]


def set_effect_mode(agent: Agent, mode_id: str) -> bool:
    """Set the agent's approval mode for ``mode_id``; ``False`` when it is not one of its modes (nothing set).

    ``ask`` (and the server's ``auto``, which approves in the server) set it back to ``ask``.
    """
    there = {m.value for m in modes(sandboxed=agent.permissions.sandboxed)}
    if mode_id in there:
        agent.permissions.mode = ApprovalMode(mode_id)
        return True
    if mode_id == "auto":
        agent.permissions.mode = ApprovalMode.ASK
    return False


__all__ = ["effect_modes", "set_effect_mode"]
