"""What the actions of a stretch of history did: one reading of the stored outcomes for every rule.

Actions are stored two ways: tool returns (their ``StepRecord``) and, in the text protocol, a
results message whose request metadata lists its blocks (``TextActionRecord``s under ``RESULTS_KEY``). The
reply policy asks this module, and only this module, whether anything ran, whether the last
action failed and which errors came up (compared through ``errors.normalise_error``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart

from freeact_tui.shell.words import shell_only_cell
from freeact_tui.store.meta_keys import TEXT_ACTIONS_KEY
from freeact_tui.store.step_record import StepRecord, stored_text_actions
from freeact_tui.store.transcript import content_text
from freeact_tui.toolcalls import CODE_TOOL

RESULTS_KEY = TEXT_ACTIONS_KEY
"""Request metadata of a results message: the list of actions it reports (id, code, outcome, output)."""


@dataclass(frozen=True)
class Outcome:
    """One action that ran or was decided on: a tool call or a code block of the text protocol."""

    kind: Literal["tool", "block"]
    outcome: str
    """``ok``, ``error``, ``rejected``, ``interrupted`` (``""``: a freeact session stores none)."""
    output: str
    guarded: bool = False
    code: str | None = None
    """The cell of a code action (``None``: another tool, or its call is not in the messages read)."""
    call: str | None = None
    """Another tool's call: its name and arguments (``None``: a code action, or not in the messages read)."""

    @property
    def ran(self) -> bool:
        return self.outcome in ("ok", "error", "")

    @property
    def failed(self) -> bool:
        return self.outcome == "error"

    @property
    def shell_only(self) -> bool:
        """A cell of ``!`` lines or a ``%%bash`` cell: an install, a listing — it computes no Python result."""
        return self.code is not None and shell_only_cell(self.code)


def outcomes(messages: Sequence[ModelMessage]) -> Iterator[Outcome]:
    """The actions of ``messages`` in order; a broken call (malformed arguments, unknown tool) is none."""
    calls = {
        p.tool_call_id: p
        for m in messages
        if isinstance(m, ModelResponse)
        for p in m.parts
        if isinstance(p, ToolCallPart)
    }
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for block in stored_text_actions(message.metadata):
            yield Outcome("block", str(block.step.outcome), block.output, code=block.code)
        for part in message.parts:
            if isinstance(part, ToolReturnPart):
                record = StepRecord.of_part(part)
                if record.malformed:
                    continue
                code, call = _call_of(calls.get(part.tool_call_id))
                yield Outcome(
                    "tool",
                    record.outcome or "",
                    content_text(part.content),
                    guarded=bool(record.guarded),
                    code=code,
                    call=call,
                )


def _call_of(call: ToolCallPart | None) -> tuple[str | None, str | None]:
    """A call's code (a code action) or its name and arguments (another tool); ``None`` for what is not known."""
    if call is None:
        return None, None
    try:
        args = call.args_as_dict()
    except ValueError:
        return None, None
    if call.tool_name == CODE_TOOL:
        code = args.get("code")
        return (code if isinstance(code, str) else None), None
    return None, f"{call.tool_name} {json.dumps(args, sort_keys=True, default=str)}"


def acted(messages: Sequence[ModelMessage]) -> bool:
    """Whether anything ran (or was tried and decided on) in these messages."""
    return next(outcomes(messages), None) is not None


def last_action_failed(
    messages: Sequence[ModelMessage], kind: Literal["tool", "block"] | None = None
) -> bool:
    """Whether the last action (of ``kind``, if given) that ran ended in an error."""
    ran = [o for o in outcomes(messages) if o.ran and (kind is None or o.kind == kind)]
    return bool(ran) and ran[-1].failed


def failure_not_redone(messages: Sequence[ModelMessage]) -> bool:
    """The last Python code that failed was followed only by shell cells that worked (an install).

    What that code was to compute is still unknown: a small model, its ``import pandas`` failed and
    ``pip install pandas`` done, answered with a price and a city no code had computed (#30).
    """
    ran = [o for o in outcomes(messages) if o.ran]
    failed = [i for i, o in enumerate(ran) if o.failed and o.code is not None and not o.shell_only]
    if not failed:
        return False
    after = ran[failed[-1] + 1 :]
    return bool(after) and all(o.shell_only and not o.failed for o in after)


def had_working_tool_call(history: Sequence[ModelMessage]) -> bool:
    """The model made a tool call that ran (any tool; not broken, rejected or interrupted)."""
    return any(o.kind == "tool" and o.ran for o in outcomes(history))


__all__ = [
    "RESULTS_KEY",
    "Outcome",
    "acted",
    "failure_not_redone",
    "had_working_tool_call",
    "last_action_failed",
    "outcomes",
]
