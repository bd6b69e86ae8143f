"""Approval modes: how much runs unasked, decided by what an action does (or by the sandbox).

- ``ask``: every action no rule decides is asked.
- ``in-folder``: code that only reads and writes inside the folder runs (and the file tools inside
  it); anything wider is asked.
- ``plan``: nothing runs; the model reads (the file tools' reads, as the rules allow) and proposes.
- ``sandboxed-auto`` (only with ``--execution sandbox``): code and shell run unasked, because the
  sandbox keeps them in (no network, writes only in the folder); what runs outside it (MCP and tool
  calls, subagents, file tools outside the folder) is asked.

A mode never loosens a deny rule, and never overrides an explicit ask rule: it decides only what no
rule decides (plan also refuses what allow rules would run: nothing runs while planning).
``judge`` is the table; the approval gate, the app and ACP use it and ``MODE_WORDS``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Literal

from freeact_tui.effects.classes import Reading, class_words, describe
from freeact_tui.project.app_state import app_state_at, app_state_touched
from freeact_tui.project.paths import configures_tools, runs_later
from freeact_tui.toolcalls import CodeAction, FileCall, ShellAction, ShellScript, ToolCall


class ApprovalMode(StrEnum):
    ASK = "ask"
    IN_FOLDER = "in-folder"
    PLAN = "plan"
    SANDBOXED_AUTO = "sandboxed-auto"


MODE_WORDS: dict[ApprovalMode, str] = {
    ApprovalMode.ASK: "ask for everything",
    ApprovalMode.IN_FOLDER: "allow in-folder work",
    ApprovalMode.PLAN: "plan: nothing runs",
    ApprovalMode.SANDBOXED_AUTO: "sandboxed auto: runs in the sandbox",
}
MODE_DESCRIPTIONS: dict[ApprovalMode, str] = {
    ApprovalMode.ASK: "Every action that no rule decides is asked.",
    ApprovalMode.IN_FOLDER: "Code that only reads and writes inside this folder runs; anything wider is asked.",
    ApprovalMode.PLAN: "Nothing runs: the model reads and proposes a plan.",
    ApprovalMode.SANDBOXED_AUTO: "Code runs unasked inside the sandbox (no network, writes only in this "
    "folder); running anything outside it is asked.",
}

_FOLDER_CLASSES = frozenset({"computes", "reads", "in-folder"})
_PLAN_RUNS = frozenset({"read"})
_SANDBOXED_KINDS = (CodeAction, ShellAction, ShellScript)


def modes(*, sandboxed: bool) -> tuple[ApprovalMode, ...]:
    """The modes there are: ``sandboxed-auto`` only where the kernel runs in the sandbox."""
    return tuple(m for m in ApprovalMode if sandboxed or m != ApprovalMode.SANDBOXED_AUTO)


def next_mode(current: ApprovalMode, *, sandboxed: bool) -> ApprovalMode:
    """The mode after ``current`` in the cycle (Ctrl+T in the app)."""
    there = modes(sandboxed=sandboxed)
    return there[(there.index(current) + 1) % len(there)] if current in there else there[0]


def parse_mode(text: str, *, sandboxed: bool) -> ApprovalMode:
    """A mode by name.

    Raises:
        ValueError: an unknown mode, or ``sandboxed-auto`` without the sandbox (says why, in one line).
    """
    try:
        mode = ApprovalMode(text.strip())
    except ValueError:
        raise ValueError(f"unknown approval mode {text!r} (one of {', '.join(ApprovalMode)})") from None
    if mode not in modes(sandboxed=sandboxed):
        raise ValueError("the sandboxed-auto mode needs the sandbox (--execution sandbox)")
    return mode


@dataclass(frozen=True)
class Verdict:
    """A mode's decision on an action no rule decided (or, in plan mode, on any action)."""

    decision: Literal["allow", "deny"]
    reason: str


def file_call_inside(call: FileCall, working_dir: Path) -> bool:
    """The file call stays in the folder and out of the app's own state (``project.app_state``, whatever the
    folder); a write never touches a name that configures git, the app or a tool."""
    root = os.path.realpath(working_dir)
    full = call.resolved or os.path.realpath(os.path.join(root, call.path))
    if call.outside or not (full == root or full.startswith(root.rstrip("/") + "/")):
        return False
    if app_state_touched(full, writes=call.kind == "write") is not None:
        return False
    shown = os.path.relpath(full, root)
    return call.kind != "write" or not (runs_later(shown) or configures_tools(shown))


def judge(
    mode: ApprovalMode,
    call: ToolCall,
    reading: Reading | None,
    *,
    rule: Literal["allow", "ask", "deny"] | None,
    sandboxed: bool,
    working_dir: Path,
    trusted: bool = True,
) -> Verdict | None:
    """What ``mode`` decides for ``call`` (``None``: the rules decide, or the user is asked).

    Args:
        mode: the approval mode.
        call: the action.
        reading: what the action does (``read_effects``), for code.
        rule: the effect of the rule that matched the action, ``None`` when none did.
        sandboxed: the kernel runs in the sandbox.
        working_dir: the folder.
        trusted: every cell that ran in the kernel was read fully (``effects.ledger``); else the in-folder
            mode vouches for nothing the kernel runs (the reading of code then says so itself).
    """
    if rule == "deny":
        return None  # a mode never loosens a deny rule
    if mode == ApprovalMode.PLAN:
        if call.kind in _PLAN_RUNS:
            return None
        return Verdict("deny", "plan mode: nothing runs; read, then propose the plan in words")
    if rule is not None:
        return None  # an allow rule runs it; an explicit ask rule keeps asking
    if mode == ApprovalMode.IN_FOLDER or (mode == ApprovalMode.SANDBOXED_AUTO and not sandboxed):
        if isinstance(call, CodeAction) and reading is not None and reading.effect_class in _FOLDER_CLASSES:
            return Verdict("allow", f"in-folder mode: {describe(reading)}")
        if isinstance(call, FileCall) and file_call_inside(call, working_dir) and trusted:
            return Verdict("allow", f"in-folder mode: {call.kind} inside this folder")
        return None
    if mode == ApprovalMode.SANDBOXED_AUTO and app_state_at(str(working_dir)) is None:
        # the sandbox binds the folder writable: in a folder of the app's own state it keeps nothing in
        if isinstance(call, _SANDBOXED_KINDS):
            return Verdict("allow", "sandboxed-auto mode: runs inside the sandbox")
        if isinstance(call, FileCall) and file_call_inside(call, working_dir):
            return Verdict("allow", f"sandboxed-auto mode: {call.kind} inside this folder")
    return None


def mode_rule_words(mode: ApprovalMode) -> str:
    """What the in-folder mode lets run, in the words rules use (``class_words``)."""
    if mode == ApprovalMode.IN_FOLDER:
        return class_words("in-folder")
    return MODE_DESCRIPTIONS[mode]


__all__ = [
    "MODE_DESCRIPTIONS",
    "MODE_WORDS",
    "ApprovalMode",
    "Verdict",
    "file_call_inside",
    "judge",
    "mode_rule_words",
    "modes",
    "next_mode",
    "parse_mode",
]
