"""Approvals over ACP: an ``ApprovalRequest`` becomes ``session/request_permission`` and the answer a ``Decision``.

The four options are those of the app's dialog, with the same rule the dialog proposes
(``proposed_pattern``): allow once, always allow (a saved allow rule), reject once, always deny (a
saved deny rule). A cancelled request (the client cancelled it, or the turn was cancelled) rejects.
"""

from __future__ import annotations

from acp.schema import AllowedOutcome, PermissionOption, RequestPermissionResponse

from freeact_tui.effects import class_of
from freeact_tui.events import Decision
from freeact_tui.permissions.folder_scope import folder_relative
from freeact_tui.permissions.patterns import proposed_pattern, rule_words
from freeact_tui.toolcalls import ToolCall

ALLOW_ONCE = "allow_once"
ALLOW_ALWAYS = "allow_always"
REJECT_ONCE = "reject_once"
REJECT_ALWAYS = "reject_always"

CANCELLED_REASON = "the permission request was cancelled"


def permission_options(call: ToolCall, effect_class: str | None = None) -> list[PermissionOption]:
    """The options offered for ``call``; the "always" ones name the rule they save, in words (``rule_words``).

    ``effect_class`` (``ApprovalRequest.effect_class``): code that stays inside the folder is always
    allowed by its class; it is always denied as this exact cell.
    """
    pattern = proposed_pattern(call, effect_class)
    allow = rule_words(call.kind, pattern)
    if class_of(pattern) is None and folder_relative(call.kind, pattern):
        allow += ", in this folder only"  # kept with the folder it was given in (``folder_scope``)
    deny = rule_words(call.kind, proposed_pattern(call, deny=True), "deny")
    return [
        PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once"),
        PermissionOption(option_id=ALLOW_ALWAYS, name=f"Always allow {allow}", kind="allow_always"),
        PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once"),
        PermissionOption(option_id=REJECT_ALWAYS, name=f"Always deny {deny}", kind="reject_always"),
    ]


def decision_for(
    response: RequestPermissionResponse, call: ToolCall, effect_class: str | None = None
) -> Decision:
    """The decision a client's answer stands for; an unknown option id rejects (and says so)."""
    outcome = response.outcome
    if not isinstance(outcome, AllowedOutcome):
        return Decision(False, reason=CANCELLED_REASON)
    pattern = proposed_pattern(call, deny=True)
    match outcome.option_id:
        case "allow_once":
            return Decision(True)
        case "allow_always":
            return Decision(True, remember="always", pattern=proposed_pattern(call, effect_class))
        case "reject_once":
            return Decision(False)
        case "reject_always":
            return Decision(False, remember="always", pattern=pattern)
    return Decision(False, reason=f"the client answered with an unknown option {outcome.option_id!r}")


__all__ = [
    "ALLOW_ALWAYS",
    "ALLOW_ONCE",
    "CANCELLED_REASON",
    "REJECT_ALWAYS",
    "REJECT_ONCE",
    "decision_for",
    "permission_options",
    "rule_words",
]
