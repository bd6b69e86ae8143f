"""The approval gate: every action yields an ``ApprovalRequest`` and waits for its decision.

A code action that is nothing but shell (``!cmd`` lines, a ``%%bash`` cell) is not asked itself:
its shell parts are, one by one. The approval mode (``freeact_tui.effects.modes``, kept on the rules) decides what no rule decides
(plan mode refuses everything but reads). A rule that allows or denies the action decides it at once (the
request still goes out, decided, so a UI can show what ran or was refused, and why). A decision
with ``remember`` adds a rule. A timeout or a cancelled wait answers the request (rejected), so no
dialog keeps asking.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from freeact_tui.actions.ports import EventPorts
from freeact_tui.effects import Found, Kind, Reading, describe
from freeact_tui.effects.classes import reading as reading_of
from freeact_tui.effects.ledger import KernelLedger, runs_in_kernel
from freeact_tui.effects.modes import ApprovalMode, Verdict, judge
from freeact_tui.events import ApprovalRequest, Decision, Phase, ToolOutput
from freeact_tui.permissions.rules import PermissionRules, PermissionsFileError
from freeact_tui.reach.named_paths import named_paths
from freeact_tui.shell.words import shell_only_cell
from freeact_tui.store.decision_record import decision_record
from freeact_tui.toolcalls import CodeAction, ShellAction, ShellScript, ToolCall, call_record


class ApprovalGate:
    """Asks for decisions on behalf of one agent.

    Args:
        permissions: the rules that may decide at once, and that remembered decisions extend.
        ports: events (``ApprovalRequest``), event ids and the phase of the call that waits.
        timeout: seconds to wait for a decision before rejecting; ``None`` waits forever.
        working_dir: where the actions run; a request names the paths of code, shell and scripts
            that lead out of it (``ApprovalRequest.named_paths``). ``None``: none are named.
    """

    def __init__(
        self,
        permissions: PermissionRules,
        ports: EventPorts,
        *,
        timeout: float | None,
        working_dir: Path | None = None,
    ) -> None:
        self.permissions = permissions
        self._working_dir = working_dir
        self._emit = ports.emit
        self._ids = ports.ids
        self._timeout = timeout
        self._set_phase = ports.set_phase
        self._records: dict[str, list[dict[str, Any]]] = {}
        self.kernel = KernelLedger(working_dir or permissions.working_dir)
        """What ran in this agent's kernel: the effect rules' and modes' readings depend on it
        (``kernel_restarted`` when the kernel starts again)."""

    def kernel_restarted(self) -> None:
        """The agent's kernel starts again (reset, restart, rewind): readings are trusted again."""
        self.kernel.restarted()

    async def ask(self, call: ToolCall, corr_id: str) -> Decision:
        """Yield an ApprovalRequest for ``call`` and wait for its decision (rules decide at once)."""
        paths = named_paths(call, self._working_dir) if self._working_dir is not None else ()
        wd = self._working_dir
        reading = self.kernel.read(call) if wd is not None and isinstance(call, CodeAction) else None
        lost = self.kernel.lost if runs_in_kernel(call) else None
        if reading is None and lost is not None:  # a shell part or file operation the kernel carries out
            words = describe(reading_of([Found(Kind.UNKNOWN, lost)]))
        else:
            words = describe(reading) if reading is not None else ""
        request = ApprovalRequest(
            call,
            named_paths=paths,
            effects=words,
            effect_class=reading.effect_class if reading is not None else None,
            **self._ids(corr_id),
        )
        effect = self.permissions.check(call, kernel=self.kernel)
        verdict = self._mode_verdict(call, reading, effect)
        if verdict is not None:
            mode = str(self.permissions.mode)
            request.resolve(
                Decision(verdict.decision == "allow", by_rule=True, reason=verdict.reason, by_mode=mode)
            )
        elif effect == "allow":
            request.resolve(Decision(True, by_rule=True))
        elif effect == "ask" and isinstance(call, CodeAction) and shell_only_cell(call.code):
            request.resolve(Decision(True, per_part=True))  # one question per shell part, not two
        elif effect == "deny":
            rule = self.permissions.matching_rule(call, kernel=self.kernel)
            named = f" `{rule.kind}:{rule.pattern}`" if rule else ""
            request.resolve(Decision(False, by_rule=True, reason=f"denied by the permission rule{named}"))
        self._emit(request)
        if not request.decided:
            self._set_phase(corr_id, Phase.APPROVAL)
        try:
            decision = await self._wait(request, corr_id)
        except BaseException:  # cancelled or failed: answer it, so no UI keeps asking
            request.resolve(Decision(False))
            raise
        finally:
            self._set_phase(corr_id, None)
        self._record(corr_id, call, decision)
        if decision.approved:  # what it rebinds, what it cannot be told, what it reached weigh on later readings
            self.kernel.ran(call, corr_id, vouched=self._vouched(call, decision))
        if decision.remember and decision.pattern:  # a remembered rejection is a deny rule
            effect = "allow" if decision.approved else "deny"
            try:
                self.permissions.add(call.kind, decision.pattern, scope=decision.remember, effect=effect)
            except (PermissionsFileError, ValueError) as exc:  # the decision stands; only the rule is lost
                self._emit(ToolOutput(f"The rule was not saved: {exc}", is_error=True, **self._ids(corr_id)))
        return decision

    def _vouched(self, call: ToolCall, decision: Decision) -> bool:
        """The app itself let ``call`` run as read-only work: a shell command a built-in allow rule covers, or
        a cell of shell lines only (each line is asked, and judged, on its own)."""
        if decision.per_part:
            return True
        if not isinstance(call, ShellAction | ShellScript):
            return False
        entry = self.permissions.matching_rule(call, kernel=self.kernel)
        return entry is not None and entry.scope == "default" and entry.effect == "allow"

    def _mode_verdict(self, call: ToolCall, reading: Reading | None, effect: str) -> Verdict | None:
        """What the approval mode decides (``None``: the rules, or the user). Never loosens a deny rule."""
        rules = self.permissions
        if rules.mode == ApprovalMode.ASK or effect == "deny" or self._working_dir is None:
            return None
        if effect == "allow" and rules.mode != ApprovalMode.PLAN:
            return None
        entry = rules.matching_rule(call, kernel=self.kernel)
        matched = entry.effect if entry is not None else None
        if rules.skip_permissions and matched is None:
            matched = "allow"
        return judge(
            rules.mode,
            call,
            reading,
            rule=matched,
            sandboxed=rules.sandboxed,
            working_dir=self._working_dir,
            trusted=self.kernel.lost is None,
        )

    def _record(self, corr_id: str, call: ToolCall, decision: Decision) -> None:
        skip = self.permissions.skip_permissions
        record = decision_record(call_record(call), decision, skip_permissions=skip)
        self._records.setdefault(corr_id, []).append(record)

    def take_records(self, corr_id: str) -> list[dict[str, Any]]:
        """The decisions on a finished call (the call itself, then its shell parts and MCP calls), for its
        ``StepRecord.approvals`` so that a resumed session shows them; forgotten here."""
        self.kernel.finished(corr_id)
        return self._records.pop(corr_id, [])

    async def _wait(self, request: ApprovalRequest, corr_id: str) -> Decision:
        if self._timeout is None or request.decided:
            return await request.wait()
        try:
            return await asyncio.wait_for(request.wait(), self._timeout)
        except TimeoutError:
            request.resolve(Decision(False))
            self._emit(
                ToolOutput(
                    f"No decision within {self._timeout:g} s: rejected.", is_error=True, **self._ids(corr_id)
                )
            )
            return Decision(False)


__all__ = ["ApprovalGate"]
