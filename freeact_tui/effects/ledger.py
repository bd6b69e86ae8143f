"""What ran in one kernel since it last started, and whether readings of code may still vouch for it.

A reading (``read_effects``) judges a cell by its text, but the kernel is stateful: what a later cell's
names, imports and even its syntax mean is what earlier cells left there. A cell read fully changes that
state only in ways the reading follows (the names it binds; a trusted name it rebinds it cannot be told
at all). A cell the reading cannot tell (``exec``, ``setattr(builtins, …)``, ``sys.modules[…] = m``,
``os.path.join = f``, an audit hook, ``get_ipython()``'s magics, input transformers, ``%alias``,
``%autocall``) may have changed anything: after one ran, no reading of this kernel's later code is
trusted — each reads as "cannot tell" too, with the reason ``LOST`` — until the kernel starts again
(a reset, a restart after its death or an interrupt, a rewind). Nor, then, is what else runs through the
kernel (shell commands, scripts, the file tools' operations: a patched ``get_ipython().system`` or
``open`` runs instead) vouched for by what the app itself calls harmless: the built-in allow rules and
the in-folder mode stop applying to them (``runs_in_kernel``); the user's own rules keep working.

A cell read fully may still install state that directs LATER work beyond the folder: a log file outside it
(``logging.basicConfig(filename='/tmp/x.log')``; a later ``logging.warning(secret)`` only computes by its
text), a program that plants a module the kernel imports later, a file tool's write to
``~/.config/matplotlib/matplotlibrc``. So whatever the kernel carries out that the app itself did not vouch
for as work inside the folder — a code action whose own reading is wider than in-folder (outside, programs,
network, the environment, a protected name), a shell command no built-in read-only rule allowed, a file
tool's write outside the folder — leaves the kernel WIDENED: no reading of its later code vouches for it
either (each reads as "cannot tell", with the reason ``WIDENED``, so neither the in-folder mode nor an
``effects:`` rule runs it unasked) until the kernel starts again. What a widened kernel's shell runs is still
judged by the rules (a fully read cell cannot patch what runs programs).

The approval gate notes a code action when it is approved (before it runs, so that a cell approved at
the same time is judged after it) and when it finished; a kernel that starts again forgets what had
finished before, and keeps what was approved and has not run yet (it runs in the new kernel).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from freeact_tui.effects.classes import Found, Kind, Reading, describe, reading
from freeact_tui.effects.modes import file_call_inside
from freeact_tui.effects.reader import names_kept, read_effects
from freeact_tui.toolcalls import CodeAction, FileCall, ShellAction, ShellScript, ToolCall

LOST = "earlier code in this kernel did something the reading cannot follow"
RESET_HINT = "reset the kernel to trust readings again"
WIDENED = "earlier work in this kernel, approved beyond this folder, may direct later work there"
_FOLDER_CLASSES = frozenset({"computes", "reads", "in-folder"})


RUNS_IN_KERNEL = (CodeAction, ShellAction, ShellScript, FileCall)
"""The calls the kernel carries out (code, its shell parts and scripts, the file tools' operations)."""


def runs_in_kernel(call: ToolCall) -> bool:
    return isinstance(call, RUNS_IN_KERNEL)


@dataclass
class _Ran:
    corr_id: str | None
    rebound: frozenset[str]
    cannot_tell: str | None
    widened: str | None = None
    finished: bool = False


@dataclass
class KernelLedger:
    """The code actions one kernel ran since it last started, as far as readings of later code depend on them.

    Args:
        working_dir: the folder the kernel's code runs in.
    """

    working_dir: Path
    _ran: list[_Ran] = field(default_factory=list)

    def ran(self, call: ToolCall, corr_id: str | None = None, *, vouched: bool = False) -> None:
        """``call`` was approved to run in this kernel (``corr_id``: the call it belongs to).

        Args:
            vouched: the app itself let it run as read-only work (a built-in allow rule of a shell
                command; a cell of shell lines only, each of which is judged on its own).
        """
        if isinstance(call, CodeAction):
            own = read_effects(call, self.working_dir, bound=self.rebound)
            why = next((f.what for f in sorted(own.found) if f.kind == Kind.UNKNOWN), None)
            wide = own.effect_class not in _FOLDER_CLASSES and why is None and not vouched
            self._ran.append(_Ran(corr_id, names_kept(call), why, describe(own) if wide else None))
        elif isinstance(call, FileCall):
            if call.kind != "read" and not file_call_inside(call, self.working_dir):
                self._ran.append(_Ran(corr_id, frozenset(), None, f"{call.kind} {call.path}"))
        elif isinstance(call, ShellAction | ShellScript) and not vouched:
            self._ran.append(_Ran(corr_id, frozenset(), None, f"a program approved by hand: {call.kind}"))

    def finished(self, corr_id: str) -> None:
        """The call ``corr_id`` has finished (what it approved has run, or never will)."""
        for entry in self._ran:
            if entry.corr_id == corr_id:
                entry.finished = True

    def settle(self) -> None:
        """No call is waiting to run in this kernel (a new turn starts): a call cancelled before it
        finished counts as finished, so that the next start of the kernel forgets it."""
        for entry in self._ran:
            entry.finished = True

    def restarted(self) -> None:
        """The kernel starts again: what ran before is gone; what is approved and not yet run is kept."""
        self._ran = [entry for entry in self._ran if not entry.finished]

    @property
    def rebound(self) -> frozenset[str]:
        """The trusted names (``print``, ``open``) code that ran rebound in the kernel."""
        return frozenset().union(*(entry.rebound for entry in self._ran))

    @property
    def lost(self) -> str | None:
        """Why readings no longer vouch for this kernel's code (``None``: every cell that ran was read fully)."""
        why = next((entry.cannot_tell for entry in self._ran if entry.cannot_tell is not None), None)
        return None if why is None else f"{LOST} ({why[:60]}); {RESET_HINT}"

    @property
    def widened(self) -> str | None:
        """Why readings no longer vouch for this kernel's later code though every cell was read fully: work
        approved beyond the folder ran in it (``None``: none did)."""
        why = next((entry.widened for entry in self._ran if entry.widened is not None), None)
        return None if why is None else f"{WIDENED} ({why[:60]}); {RESET_HINT}"

    def read(self, call: ToolCall) -> Reading:
        """What ``call`` does (``read_effects``), and "cannot tell" as well while readings are not trusted."""
        found = read_effects(call, self.working_dir, bound=self.rebound)
        why = self.lost or self.widened
        if why is None or not isinstance(call, CodeAction):
            return found
        return reading([*found.found, Found(Kind.UNKNOWN, why)])


__all__ = ["LOST", "RESET_HINT", "RUNS_IN_KERNEL", "WIDENED", "KernelLedger", "runs_in_kernel"]
