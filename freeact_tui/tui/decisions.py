"""How a decision reads on an action's block, live and in a resumed session alike."""

from __future__ import annotations

from freeact_tui.events import Decision


def decision_status(decision: Decision | None, *, skip_permissions: bool = False) -> tuple[str, bool]:
    """The block's status line for ``decision`` and whether the block shows as rejected.

    Args:
        decision: The decision; ``None`` when the request was dropped undecided (the turn ended).
        skip_permissions: a rule-less approval came from ``--skip-permissions``.
    """
    if decision is None:
        return "cancelled", True
    if decision.per_part:
        return "shell commands asked one by one", False
    if decision.by_rule:  # --skip-permissions approves; a refusal is always a deny rule's
        source = "--skip-permissions" if skip_permissions else "rule"
        if decision.by_mode:
            source = f"the {decision.by_mode} mode"
            return (f"auto-approved by {source}", False) if decision.approved else (f"rejected by {source}", True)
        return (f"auto-approved by {source}", False) if decision.approved else ("rejected by rule", True)
    if decision.approved:
        rule = f" · {decision.remember} rule: {decision.pattern}" if decision.remember and decision.pattern else ""
        return f"approved{rule}", False
    if decision.instruction:  # the turn went on with the user's words
        return f"rejected · you said: {decision.instruction}", True
    rule = f" · {decision.remember} deny rule: {decision.pattern}" if decision.remember and decision.pattern else ""
    return f"rejected{rule}", True
