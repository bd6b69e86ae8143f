"""A decision on an action as the session file keeps it (with the tool return): written by the agent,
read back by a resumed session. One pair of functions holds every field a log shows (``tui/decisions``
reads approved, remember + pattern, by rule / by ``--skip-permissions`` / by a mode / part by part, the reason
and the user's instruction), so that none is dropped on the way to the file and back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from freeact_tui.events import Decision

_BY = ("user", "rule", "skip", "parts", "mode")


def decision_record(call: dict[str, Any], decision: Decision, *, skip_permissions: bool) -> dict[str, Any]:
    """The record of ``decision`` on ``call`` (its ``toolcalls.call_record``).

    Args:
        skip_permissions: the permission rules approve everything not denied (an approval "by rule" was theirs).
    """
    record: dict[str, Any] = {"call": call, "approved": decision.approved}
    if decision.by_mode:  # an approval mode decided it (``effects.modes``): which one
        record |= {"by": "mode", "mode": decision.by_mode}
    elif decision.per_part:  # in the order the block's status reads them (``tui.decisions``)
        record["by"] = "parts"
    elif decision.by_rule:
        record["by"] = "skip" if skip_permissions and decision.approved else "rule"
    else:
        record["by"] = "user"
    if decision.remember and decision.pattern:
        record |= {"remember": decision.remember, "pattern": decision.pattern}
    if decision.reason:
        record["reason"] = decision.reason
    if decision.instruction:
        record["instruction"] = decision.instruction
    return record


def decision_from_record(item: Mapping[str, Any]) -> tuple[Decision, bool] | None:
    """The decision a record keeps and whether ``--skip-permissions`` made it (None: not a record)."""
    if not isinstance(item.get("approved"), bool):
        return None
    by = item.get("by") if item.get("by") in _BY else "user"
    remember = item.get("remember") if item.get("remember") in ("always", "session") else None
    pattern, reason, instruction = item.get("pattern"), item.get("reason"), item.get("instruction")
    decision = Decision(
        item["approved"],
        remember=remember,
        pattern=pattern if isinstance(pattern, str) else None,
        by_rule=by in ("rule", "skip", "mode"),
        reason=reason if isinstance(reason, str) else None,
        per_part=by == "parts",
        instruction=instruction if isinstance(instruction, str) and instruction else None,
        by_mode=item["mode"] if by == "mode" and isinstance(item.get("mode"), str) else None,
    )
    return decision, by == "skip"


__all__ = ["decision_from_record", "decision_record"]
