"""Approvals over ACP: an ``ApprovalRequest`` becomes ``session/request_permission`` and the answer a ``Decision``.

The four options are those of the app's dialog, with the same rule the dialog proposes
(``proposed_pattern``): allow once, always allow (a saved allow rule), reject once, always deny (a
saved deny rule). A cancelled request (the client cancelled it, or the turn was cancelled) rejects.
"""

from __future__ import annotations

from acp.schema import AllowedOutcome, PermissionOption, RequestPermissionResponse

from freeact_tui.cellrules import is_cell_pattern
from freeact_tui.events import Decision
from freeact_tui.rulepatterns import proposed_pattern
from freeact_tui.toolcalls import ToolCall

ALLOW_ONCE = "allow_once"
ALLOW_ALWAYS = "allow_always"
REJECT_ONCE = "reject_once"
REJECT_ALWAYS = "reject_always"

CANCELLED_REASON = "the permission request was cancelled"


# (one, many) of each kind of action, for what a saved rule covers in words.
_NOUNS: dict[str, tuple[str, str]] = {
    "code": ("code action", "code actions"),
    "script": ("shell script", "shell scripts"),
    "shell": ("shell command", "shell commands"),
    "mcp": ("MCP tool call", "MCP tool calls"),
    "tool": ("tool call", "tool calls"),
    "subagent": ("subagent task", "subagent tasks"),
    "read": ("file read", "file reads"),
    "write": ("file write", "file writes"),
}


def rule_words(kind: str, pattern: str) -> str:
    """What a saved rule for ``kind`` with ``pattern`` covers, in words: an exact-cell rule is a
    fingerprint nobody can read, so it is named by what it matches (this very code), never by its hash."""
    one, many = _NOUNS.get(kind, ("action", "actions"))
    if is_cell_pattern(pattern):
        return f"exactly this {one} (the same text, character for character)"
    return f"{many} matching `{pattern}`"


def permission_options(call: ToolCall) -> list[PermissionOption]:
    """The options offered for ``call``; the "always" ones say what the rule they save covers."""
    covers = rule_words(call.kind, proposed_pattern(call))
    return [
        PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once"),
        PermissionOption(option_id=ALLOW_ALWAYS, name=f"Always allow {covers}", kind="allow_always"),
        PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once"),
        PermissionOption(option_id=REJECT_ALWAYS, name=f"Always deny {covers}", kind="reject_always"),
    ]


def decision_for(response: RequestPermissionResponse, call: ToolCall) -> Decision:
    """The decision a client's answer stands for; an unknown option id rejects (and says so)."""
    outcome = response.outcome
    if not isinstance(outcome, AllowedOutcome):
        return Decision(False, reason=CANCELLED_REASON)
    pattern = proposed_pattern(call)
    match outcome.option_id:
        case "allow_once":
            return Decision(True)
        case "allow_always":
            return Decision(True, remember="always", pattern=pattern)
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
